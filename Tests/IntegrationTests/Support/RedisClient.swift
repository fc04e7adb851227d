import Foundation
import TestKit

/// Commands a test sends to Redis itself (what a writer of the group's Redis could do): one
/// blocking connection, on threads of their own, RESP2 replies read whole.
final class RedisClient: Sendable {
    /// A RESP2 reply.
    enum Reply: Equatable, Sendable {
        case status(String)
        case error(String)
        case integer(Int)
        case bulk([UInt8]?)
        case array([Reply])
    }

    private let connection: RawConnection

    init(port: Int) throws {
        connection = try RawConnection(port: port, readTimeout: 10)
    }

    /// Sends `arguments` as one command and reads its reply.
    func command(_ arguments: [[UInt8]]) async throws -> Reply {
        var bytes = Array("*\(arguments.count)\r\n".utf8)
        for argument in arguments { bytes += Array("$\(argument.count)\r\n".utf8) + argument + [13, 10] }
        guard await connection.send(bytes) else { throw ProcessFailure("redis closed the connection") }
        return try await connection.readRedisReply()
    }

    /// `command` with text arguments.
    func command(_ arguments: String...) async throws -> Reply {
        try await command(arguments.map { Array($0.utf8) })
    }
}

extension RawConnection {
    /// One whole RESP2 reply.
    func readRedisReply() async throws -> RedisClient.Reply {
        var reader = RESPReader(connection: self)
        return try await reader.reply()
    }
}

/// Reads RESP2 from a connection, a chunk at a time.
private struct RESPReader {
    let connection: RawConnection
    var buffer: [UInt8] = []

    init(connection: RawConnection) { self.connection = connection }

    mutating func reply() async throws -> RedisClient.Reply {
        let line = try await self.line()
        let text = String(decoding: line.dropFirst(), as: UTF8.self)
        switch line.first {
        case UInt8(ascii: "+"): return .status(text)
        case UInt8(ascii: "-"): return .error(text)
        case UInt8(ascii: ":"): return .integer(Int(text) ?? 0)
        case UInt8(ascii: "$"):
            guard let length = Int(text), length >= 0 else { return .bulk(nil) }
            let bytes = try await take(length + 2)
            return .bulk(Array(bytes.prefix(length)))
        case UInt8(ascii: "*"):
            var elements: [RedisClient.Reply] = []
            for _ in 0..<max(0, Int(text) ?? 0) { elements.append(try await reply()) }
            return .array(elements)
        default:
            throw ProcessFailure("not RESP: \(text)")
        }
    }

    private mutating func line() async throws -> [UInt8] {
        while true {
            if let end = buffer.indices.dropLast().first(where: { buffer[$0] == 13 && buffer[$0 + 1] == 10 }) {
                let line = Array(buffer[..<end])
                buffer.removeFirst(end + 2)
                return line
            }
            try await more()
        }
    }

    private mutating func take(_ count: Int) async throws -> [UInt8] {
        while buffer.count < count { try await more() }
        let taken = Array(buffer.prefix(count))
        buffer.removeFirst(count)
        return taken
    }

    private mutating func more() async throws {
        let chunk = await connection.receive()
        guard !chunk.isEmpty else { throw ProcessFailure("redis closed the connection or fell silent") }
        buffer += chunk
    }
}
