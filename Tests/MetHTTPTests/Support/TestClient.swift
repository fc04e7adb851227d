import Foundation
import MetEngine
import TestKit

/// The client end of a socketpair a `LoopHarness` serves: a blocking socket whose every read and
/// write gives up after 10 s. The async calls block on a thread of their own, never on the
/// cooperative pool, where the responder's tasks run. Closed when released.
final class TestClient: Sendable {
    /// One response, framed by `Content-Length` as the server frames every one.
    struct Reply: Sendable {
        var status: Int
        /// Header fields by lower-cased name (the last of a name wins).
        var fields: [String: String]
        var body: [UInt8]
    }

    /// What a read meets once the expected responses are taken.
    enum Next: Equatable {
        /// The server ended its side (a read gave 0).
        case end
        /// The read failed with this errno (ECONNRESET: the server reset the connection).
        case failure(CInt)
        /// More bytes.
        case bytes
    }

    let descriptor: CInt
    /// Bytes read and not yet taken as a response.
    private let unread = Locked<[UInt8]>([])

    init(descriptor: CInt) {
        self.descriptor = descriptor
        // Only a hang waits this long: a loop thread starved by a loaded machine (ThreadSanitizer
        // beside a release build) once took more than 10 s to answer.
        var timeout = timeval(tv_sec: 30, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(descriptor, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    deinit { close(descriptor) }

    /// Sends all of `bytes` from the calling thread; the errno of the write that failed, or nil.
    /// For a few bytes into an empty socket (`LoopHarness.connect`'s `before`), which cannot block.
    @discardableResult
    func write(_ bytes: [UInt8]) -> CInt? {
        BlockingIO.sendAll(bytes, to: descriptor)
    }

    @discardableResult
    func write(_ text: String) -> CInt? { write(Array(text.utf8)) }

    /// `write(_:)` on a thread of its own, for writes that wait for the server to read.
    func send(_ bytes: [UInt8]) async -> CInt? {
        await BlockingIO.onThread { self.write(bytes) }
    }

    /// Reads until `count` whole responses have come, and returns them; fewer when the server
    /// ends the connection or a read times out first.
    func replies(_ count: Int) async -> [Reply] {
        await BlockingIO.onThread {
            var replies: [Reply] = []
            // Each pass takes a read of up to 64 KiB: enough passes for any reply the tests expect.
            for _ in 0..<10_000 {
                while replies.count < count, let reply = self.unread.withLock(Self.takeReply) { replies.append(reply) }
                guard replies.count < count, case .bytes = self.readSome() else { break }
            }
            return replies
        }
    }

    /// What the next read meets after the responses taken so far.
    func next() async -> Next {
        await BlockingIO.onThread {
            self.unread.withLock { $0.isEmpty } ? self.readSome() : .bytes
        }
    }

    /// Whether the server closes its end within `polls` waits of a second each, while the client
    /// reads nothing.
    func hangsUp(withinPolls polls: Int = 10) async -> Bool {
        await BlockingIO.onThread {
            for _ in 0..<polls {
                // No events asked for: poll returns only for a hang-up or an error.
                var entry = pollfd(fd: self.descriptor, events: 0, revents: 0)
                if poll(&entry, 1, 1_000) > 0 { return entry.revents & Int16(POLLHUP) != 0 }
            }
            return false
        }
    }

    /// How many bytes have arrived and were not read (`FIONREAD`); does not wait.
    var pendingBytes: Int {
        var count: CInt = 0
        _ = ioctl(descriptor, UInt(FIONREAD), &count)
        return Int(count) + unread.withLock { $0.count }
    }

    /// One blocking read into `unread`.
    private func readSome() -> Next {
        var buffer = [UInt8](repeating: 0, count: 65_536)
        let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
        if count == 0 { return .end }
        if count < 0 { return .failure(errno) }
        unread.withLock { $0.append(contentsOf: buffer[0..<count]) }
        return .bytes
    }

    /// Takes one whole response off the front of `bytes`; nil while it is incomplete.
    private static func takeReply(_ bytes: inout [UInt8]) -> Reply? {
        let blank = Array("\r\n\r\n".utf8)
        guard let headEnd = bytes.indices.first(where: { bytes[$0...].starts(with: blank) }) else { return nil }
        let lines = String(decoding: bytes[..<headEnd], as: UTF8.self).components(separatedBy: "\r\n")
        var fields: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            fields[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        let bodyStart = headEnd + blank.count
        let length = Int(fields["content-length"] ?? "0") ?? 0
        guard bytes.count - bodyStart >= length else { return nil }
        let status = Int(lines[0].split(separator: " ").dropFirst().first ?? "") ?? 0
        let reply = Reply(status: status, fields: fields, body: Array(bytes[bodyStart..<(bodyStart + length)]))
        bytes.removeFirst(bodyStart + length)
        return reply
    }
}
