import Foundation
import MetEngine

/// An upstream that misbehaves on purpose, on 127.0.0.1 and a port the OS picks: endless bodies
/// (of a 200 and of an error), a gzip bomb, oversized records, a trickle, a redirect. Which one is chosen by the object ID
/// asked for (`Behaviour`). Plain sockets on threads of its own; every connection is closed
/// after one answer, and every answer is bounded in bytes and time.
public final class MisbehavingUpstream: Sendable {
    /// What `GET /public/collection/v1/objects/{rawValue}` gets.
    public enum Behaviour: Int, CaseIterable, Sendable {
        /// 200, chunked, then bytes without end (until the client leaves, or 256 MiB / 30 s).
        case endlessBody = 1
        /// 200 with `Content-Encoding: gzip`: a small body that decodes to 256 MiB of zeros.
        case gzipBomb = 2
        /// 200 whose `Content-Length` announces 4 MiB, and the 4 MiB.
        case oversizedWithLength = 3
        /// 200, chunked, 4 MiB of a JSON record's shape.
        case oversizedChunked = 4
        /// 200 with a `Content-Length` of 100, then one byte a second.
        case trickle = 5
        /// 302 to an ordinary object on this same server (a client that follows it asks for 6).
        case redirect = 7
        /// A good record, as the Met would send it (the redirect's target).
        case ordinary = 6
        /// A picture's answer as the image host sends it: 200 with `ETag`, `Last-Modified` and
        /// `Cache-Control`, or 304 without a body when the request's `If-None-Match` names its tag.
        case validated = 8
        /// 500, chunked: a problem document's first bytes, then bytes without end (as `endlessBody`).
        case endlessError = 9
    }

    public let port: Int
    private let listener: CInt
    private let counts = Locked([String: Int]())
    private let stopped = Locked(false)
    /// Made once per test run, by the system's gzip (a second or two).
    private static let bomb = Result { try gzippedZeros(megabytes: 256) }

    public init() throws {
        _ = try Self.bomb.get()  // before any client waits on it
        (listener, port) = try Loopback.bind(listening: true)
        let thread = Thread { [self] in acceptLoop() }
        thread.start()
    }

    /// `http://127.0.0.1:PORT`, for `--upstream`.
    public var baseURL: String { "http://127.0.0.1:\(port)" }

    /// Requests received for `behaviour`'s path.
    public func requests(for behaviour: Behaviour) -> Int {
        counts.withLock { $0["/public/collection/v1/objects/\(behaviour.rawValue)"] ?? 0 }
    }

    /// Stops accepting; connections being answered end with their answer.
    public func stop() {
        stopped.withLock { $0 = true }
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
    }

    deinit { stop() }

    private func acceptLoop() {
        while !stopped.withLock({ $0 }) {
            let client = accept(listener, nil, nil)
            guard client >= 0 else { return }
            let thread = Thread { [self] in
                serve(client)
                close(client)
            }
            thread.start()
        }
    }

    private func serve(_ client: CInt) {
        var one: CInt = 1
        setsockopt(client, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<CInt>.size))
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(client, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var head: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4_096)
        while !head.ends(with: Array("\r\n\r\n".utf8)) && head.count < 65_536 {
            let count = buffer.withUnsafeMutableBytes { recv(client, $0.baseAddress, 1, 0) }
            guard count > 0 else { return }
            head.append(buffer[0])
        }
        let requestLine = String(decoding: head.prefix { $0 != 0x0D }, as: UTF8.self).split(separator: " ")
        guard requestLine.count == 3 else { return }
        let path = String(requestLine[1].prefix { $0 != "?" })
        counts.withLock { $0[path, default: 0] += 1 }
        let id = path.split(separator: "/").last.flatMap { Int($0) }
        guard let behaviour = id.flatMap(Behaviour.init(rawValue:)) else {
            send(client, "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
            return
        }
        let started = Date()
        switch behaviour {
        case .endlessBody, .endlessError:
            let head =
                behaviour == .endlessBody
                ? "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                : "HTTP/1.1 500 Internal Server Error\r\nContent-Type: application/problem+json\r\n"
            send(client, head + "Transfer-Encoding: chunked\r\n\r\n")
            let chunk = Array("10000\r\n".utf8) + [UInt8](repeating: 0x20, count: 65_536) + Array("\r\n".utf8)
            for _ in 0..<4_096 where Date().timeIntervalSince(started) < 30 {
                guard send(client, chunk) else { return }
            }
        case .gzipBomb:
            guard let bomb = try? Self.bomb.get() else { return }
            send(
                client,
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Encoding: gzip\r\n"
                    + "Content-Length: \(bomb.count)\r\nConnection: close\r\n\r\n")
            send(client, bomb)
        case .oversizedWithLength, .oversizedChunked:
            let record = Array(#"{"objectID":\#(behaviour.rawValue),"title":""#.utf8)
            let filler = [UInt8](repeating: UInt8(ascii: "a"), count: 4 * 1_048_576)
            let body = record + filler + Array(#""}"#.utf8)
            if behaviour == .oversizedWithLength {
                send(
                    client,
                    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: \(body.count)\r\n"
                        + "Connection: close\r\n\r\n")
                send(client, body)
            } else {
                send(client, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n")
                send(client, Array(String(body.count, radix: 16).utf8) + Array("\r\n".utf8) + body)
                send(client, "\r\n0\r\n\r\n")
            }
        case .trickle:
            send(client, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n")
            for _ in 0..<100 where Date().timeIntervalSince(started) < 30 {
                guard send(client, " ") else { return }
                Thread.sleep(forTimeInterval: 1)
            }
        case .redirect:
            send(
                client,
                "HTTP/1.1 302 Found\r\nLocation: \(baseURL)/public/collection/v1/objects/6\r\nContent-Length: 0\r\n"
                    + "Connection: close\r\n\r\n")
        case .validated:
            let fields =
                "ETag: \(Self.validatedTag)\r\nLast-Modified: Wed, 23 Oct 2019 00:00:00 GMT\r\n"
                + "Cache-Control: max-age=432000\r\nConnection: close\r\n"
            let request = String(decoding: head, as: UTF8.self).lowercased()
            if request.contains("\r\nif-none-match: \(Self.validatedTag.lowercased())\r\n") {
                send(client, "HTTP/1.1 304 Not Modified\r\n\(fields)\r\n")
            } else {
                send(client, "HTTP/1.1 200 OK\r\nContent-Type: image/jpeg\r\nContent-Length: 4\r\n\(fields)\r\nJPEG")
            }
        case .ordinary:
            let body = #"{"objectID":6,"title":"An ordinary record"}"#
            send(
                client,
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n"
                    + "Connection: close\r\n\r\n\(body)")
        }
    }

    /// The entity tag of `.validated`'s answer.
    public static let validatedTag = "\"abc-4\""

    @discardableResult
    private func send(_ client: CInt, _ text: String) -> Bool {
        send(client, Array(text.utf8))
    }

    /// Writes all of `bytes`; false when the client has gone.
    @discardableResult
    private func send(_ client: CInt, _ bytes: [UInt8]) -> Bool {
        BlockingIO.sendAll(bytes, to: client) == nil
    }

    /// `megabytes` MiB of zero bytes, gzip-compressed by the system's `gzip` (about 1,000 to 1).
    private static func gzippedZeros(megabytes: Int) throws -> [UInt8] {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", "head -c \(megabytes * 1_048_576) /dev/zero | gzip -c -1"]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0, !data.isEmpty else { throw ProcessFailure("gzip failed") }
        return [UInt8](data)
    }
}

extension Array where Element == UInt8 {
    fileprivate func ends(with suffix: [UInt8]) -> Bool {
        count >= suffix.count && Array(self[(count - suffix.count)...]) == suffix
    }
}
