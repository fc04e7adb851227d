import CHiredis

/// A Redis reply (RESP2), copied out of hiredis's, which is freed when its callback returns.
enum RedisReply: Sendable, Equatable {
    /// A bulk string.
    case string([UInt8])
    /// A status line (`OK`, `PONG`).
    case status(String)
    case integer(Int)
    /// A nil bulk string or array (a key that is not there, `SET … NX` that did not set).
    case null
    case array([RedisReply])
    /// An error line (`ERR …`, `NOAUTH …`, `WRONGPASS …`).
    case error(String)

    /// Copies `reply` and its elements. hiredis nests arrays at most 7 deep, so this recursion is
    /// bounded.
    init(_ reply: UnsafePointer<redisReply>) {
        let value = reply.pointee
        func bytes() -> [UInt8] {
            guard let text = value.str, value.len > 0 else { return [] }
            return [UInt8](UnsafeRawBufferPointer(start: text, count: value.len))
        }
        switch value.type {
        case REDIS_REPLY_STRING: self = .string(bytes())
        case REDIS_REPLY_STATUS: self = .status(String(decoding: bytes(), as: UTF8.self))
        case REDIS_REPLY_ERROR: self = .error(String(decoding: bytes(), as: UTF8.self))
        case REDIS_REPLY_INTEGER: self = .integer(Int(value.integer))
        case REDIS_REPLY_ARRAY:
            var elements: [RedisReply] = []
            elements.reserveCapacity(value.elements)
            for index in 0..<value.elements {
                if let element = value.element[index] { elements.append(RedisReply(element)) }
            }
            self = .array(elements)
        default: self = .null
        }
    }
}
