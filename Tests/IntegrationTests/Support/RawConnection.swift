import Foundation
import TestKit

/// One blocking TCP connection to 127.0.0.1, held open across steps: for clients that trickle
/// bytes or sit on a connection. Every call blocks, so each runs on a thread of its own (the
/// async methods), never on the cooperative pool. Reads are bounded by `readTimeout` seconds.
final class RawConnection: Sendable {
    private let descriptor: CInt

    /// Connects (the kernel completes the handshake even while the server is not accepting), from
    /// `source` (another loopback address, such as 127.0.0.2, makes another client) or 127.0.0.1.
    init(port: Int, readTimeout: Double = 5, from source: String = "127.0.0.1") throws {
        descriptor = try Self.connect(port: port, readTimeout: readTimeout, from: source)
    }

    deinit { Glibc.close(descriptor) }

    /// Sends all of `bytes`; false if the server closed the connection first.
    func send(_ bytes: [UInt8]) async -> Bool {
        await BlockingIO.onThread { [descriptor] in BlockingIO.sendAll(bytes, to: descriptor) == nil }
    }

    /// Sends `bytes` one at a time, `interval` seconds apart, until all are sent, the server sends
    /// something or closes. Returns how many were sent.
    func trickle(_ bytes: [UInt8], interval: Double) async -> Int {
        await BlockingIO.onThread { [descriptor] in
            var peek: UInt8 = 0
            for (index, byte) in bytes.enumerated() {
                if recv(descriptor, &peek, 1, Int32(MSG_PEEK | MSG_DONTWAIT)) >= 0 { return index }
                var one = byte
                if Glibc.send(descriptor, &one, 1, Int32(MSG_NOSIGNAL)) != 1 { return index }
                Thread.sleep(forTimeInterval: interval)
            }
            return bytes.count
        }
    }

    /// The bytes one read gives: empty when the peer closed or `readTimeout` passed without a byte.
    func receive() async -> [UInt8] {
        await BlockingIO.onThread { [descriptor] in
            var buffer = [UInt8](repeating: 0, count: 65_536)
            let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            return count > 0 ? Array(buffer[0..<count]) : []
        }
    }

    /// Reads until the server closes or `readTimeout` passes without a byte.
    func readToEnd() async -> RawHTTP.Exchange {
        await BlockingIO.onThread { [descriptor] in
            var received: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 65_536)
            while true {
                let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
                if count == 0 { return RawHTTP.Exchange(bytes: received, closedByServer: true) }
                if count < 0 { return RawHTTP.Exchange(bytes: received, closedByServer: errno == ECONNRESET) }
                received.append(contentsOf: buffer[0..<count])
            }
        }
    }

    /// Reads one response whose head carries `Content-Length`; what arrived when the server
    /// closed or `readTimeout` passed, if that came first.
    func readResponse() async -> String {
        await BlockingIO.onThread { [descriptor] in
            var received: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 65_536)
            while true {
                let text = String(decoding: received, as: UTF8.self)
                if let headEnd = text.range(of: "\r\n\r\n"),
                    let lengthLine = text[..<headEnd.lowerBound].range(of: "Content-Length: ")
                {
                    let digits = text[lengthLine.upperBound...].prefix { $0.isNumber }
                    if let length = Int(digits), text.utf8.count - text[..<headEnd.upperBound].utf8.count >= length {
                        return text
                    }
                }
                let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
                if count <= 0 { return text }
                received.append(contentsOf: buffer[0..<count])
            }
        }
    }

    /// A blocking socket connected from `source` (a loopback address) to 127.0.0.1:`port` whose
    /// reads give up after `readTimeout` seconds without a byte; the caller closes it.
    static func connect(port: Int, readTimeout: Double, from source: String = "127.0.0.1") throws -> CInt {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw ProcessFailure("socket failed") }
        if source != "127.0.0.1" {
            var local = sockaddr_in()
            local.sin_family = sa_family_t(AF_INET)
            local.sin_addr.s_addr = inet_addr(source)
            let bound = withUnsafePointer(to: &local) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            guard bound == 0 else {
                Glibc.close(descriptor)
                throw ProcessFailure("could not bind \(source)")
            }
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else {
            Glibc.close(descriptor)
            throw ProcessFailure("connect failed")
        }
        let whole = readTimeout.rounded(.down)
        var timeout = timeval(tv_sec: Int(whole), tv_usec: Int((readTimeout - whole) * 1_000_000))
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        return descriptor
    }

    /// One request (`request`, a whole HTTP/1.1 message) and its response, on a new connection from
    /// `source` to 127.0.0.1:`port`: the response as text (see `readResponse`).
    static func exchange(port: Int, from source: String, _ request: String) async throws -> String {
        let connection = try RawConnection(port: port, readTimeout: 30, from: source)
        guard await connection.send(Array(request.utf8)) else { throw ProcessFailure("the server closed at once") }
        return await connection.readResponse()
    }
}
