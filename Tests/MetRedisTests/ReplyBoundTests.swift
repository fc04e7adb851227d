import Foundation
import MetEngine
import TestKit
import Testing

@testable import MetRedis

/// The bound on what one Redis reply may make this process hold, against a hostile server on
/// loopback that speaks just enough RESP to be connected to, then answers a GET with a reply
/// whose bytes are few but whose objects are many (an array of a hundred thousand integers: 4
/// bytes each on the wire, a reply object each in memory).
@Suite("A reply larger than any record drops the link", .timeLimit(.minutes(5)))
struct ReplyBoundTests {
    @Test func anArrayOfManySmallElementsIsChargedAndRefused() async throws {
        let server = try HostileRedis()
        let lines = Locked<[String]>([])
        let logger = Logger(level: .warning) { line in lines.withLock { $0.append(line) } }
        let tier = try RedisTier(
            address: try #require(RedisAddress("redis://127.0.0.1:\(server.port)")), prefix: "t:", timeout: 5,
            downNotice: "", secret: nil, recordLimit: 65_536, time: SystemTime(), logger: logger)
        for _ in 0..<500 where !tier.status.connected { try await Task.sleep(for: .milliseconds(10)) }
        #expect(tier.status.connected)
        guard case .unavailable = await tier.entry(for: "/objects/1") else {
            Issue.record("the hostile reply was read")
            return
        }
        // hiredis answers the call before it says why the connection went (and the link may be
        // made again by then): the log keeps the reason.
        let dropped = { lines.withLock { $0.contains { $0.contains("a reply larger than 131104 bytes") } } }
        for _ in 0..<500 where !dropped() { try await Task.sleep(for: .milliseconds(10)) }
        #expect(dropped(), "\(lines.withLock { $0 })")
    }
}

/// A loopback server that answers PING and SUBSCRIBE as Redis does, and GET with an array of
/// 100,000 integers. Each connection is served on a thread of its own until it closes.
private final class HostileRedis: Sendable {
    let port: Int
    private let listener: CInt

    init() throws {
        let (listener, port) = try Loopback.bind(listening: true)
        self.port = port
        self.listener = listener
        Thread {
            while true {
                let connection = accept(listener, nil, nil)
                if connection < 0 { return }
                Thread { Self.serve(connection) }.start()
            }
        }.start()
    }

    deinit {
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
    }

    /// Reads commands (arrays of bulk strings) and answers each, until the client closes.
    private static func serve(_ connection: CInt) {
        defer { close(connection) }
        var buffer: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4_096)
        while true {
            while let (command, used) = Self.command(in: buffer) {
                buffer.removeFirst(used)
                let reply = Self.reply(to: command)
                let sent = reply.withUnsafeBytes { send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                if sent < 0 { return }
            }
            let count = chunk.withUnsafeMutableBytes { recv(connection, $0.baseAddress, $0.count, 0) }
            if count <= 0 { return }
            buffer += chunk[0..<count]
        }
    }

    private static func reply(to command: [String]) -> [UInt8] {
        switch command.first?.uppercased() {
        case "PING": return Array("+PONG\r\n".utf8)
        case "SUBSCRIBE":
            let channel = command.dropFirst().first ?? ""
            return Array("*3\r\n$9\r\nsubscribe\r\n$\(channel.utf8.count)\r\n\(channel)\r\n:1\r\n".utf8)
        case "GET":
            return Array("*100000\r\n".utf8) + Array(String(repeating: ":1\r\n", count: 100_000).utf8)
        default: return Array("+OK\r\n".utf8)
        }
    }

    /// The first whole command in `bytes` (`*N` then N `$len` bulk strings) and the bytes it took.
    private static func command(in bytes: [UInt8]) -> ([String], Int)? {
        var index = 0
        func line() -> String? {
            guard let end = bytes[index...].firstIndex(of: 13), end + 1 < bytes.count else { return nil }
            defer { index = end + 2 }
            return String(decoding: bytes[index..<end], as: UTF8.self)
        }
        guard let header = line(), header.hasPrefix("*"), let count = Int(header.dropFirst()) else { return nil }
        var parts: [String] = []
        for _ in 0..<count {
            guard let size = line(), size.hasPrefix("$"), let length = Int(size.dropFirst()),
                index + length + 2 <= bytes.count
            else { return nil }
            parts.append(String(decoding: bytes[index..<index + length], as: UTF8.self))
            index += length + 2
        }
        return (parts, index)
    }
}
