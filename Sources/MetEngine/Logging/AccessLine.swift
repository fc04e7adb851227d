/// One request as the access log tells it (`--access-log`): what came in, what went out, how
/// long it took and what the cache did. Made by the HTTP layer when the answer is written.
public struct AccessRecord: Sendable {
    /// When the request was read, seconds since 1970.
    public var time: Double
    /// The client's address (`127.0.0.1`, `::1`, `unix`).
    public var client: String
    /// The request's ID (`X-Request-Id`, in the response and its problem document too).
    public var requestID: String
    /// `-` for a request that could not be read.
    public var method: String
    /// The target as sent (`-` when it could not be read).
    public var target: String
    public var status: Int
    /// Body bytes written (0 for a HEAD or a client gone).
    public var bytes: Int
    /// From reading the request to writing the answer, in seconds.
    public var duration: Double
    public var cache: CacheOutcome
    /// How long the answer waited for the Met or a tier below memory (the request was suspended),
    /// in seconds; nil when it was answered at once.
    public var upstream: Double?
    /// The `User-Agent` field, if any.
    public var userAgent: String?

    public init(
        time: Double, client: String, requestID: String, method: String, target: String, status: Int, bytes: Int,
        duration: Double, cache: CacheOutcome, upstream: Double?, userAgent: String?
    ) {
        self.time = time
        self.client = client
        self.requestID = requestID
        self.method = method
        self.target = target
        self.status = status
        self.bytes = bytes
        self.duration = duration
        self.cache = cache
        self.upstream = upstream
        self.userAgent = userAgent
    }
}

/// Writes access records as lines, keeping the time's prefix for the current second (one
/// formatter per event loop; not thread-safe).
///
/// Text: `TIME CLIENT ID "METHOD TARGET" STATUS BYTES DURATION_MS CACHE UPSTREAM_MS "USER_AGENT"`,
/// such as `2026-12-02T03:52:31.123Z 127.0.0.1 5f0c2a9e4b7d1e83 "GET /objects/436535" 200 1989
/// 1.04 hit - "curl/8.5.0"`: durations in milliseconds with two decimals, `-` for no upstream
/// wait or no user agent. In the quoted fields `"` and `\` are escaped with `\`, and bytes
/// outside printable ASCII written `\xHH`, so one line is always one request.
///
/// JSON: `{"time","type":"access","client","requestId","method","target","status","bytes",
/// "durationMs","cache","upstreamMs","userAgent"}`, `upstreamMs` and `userAgent` null when absent.
public struct AccessLine {
    public let format: LogFormat
    private var second = Int.min
    /// `Timestamp.secondPrefix(second)`, as bytes.
    private var prefix: [UInt8] = []

    public init(format: LogFormat) {
        self.format = format
    }

    /// The line for `record`, newline included.
    public mutating func bytes(for record: AccessRecord) -> [UInt8] {
        var line: [UInt8] = []
        append(record, to: &line)
        return line
    }

    /// Appends the line for `record`, newline included, to `buffer`: written in place, digit by
    /// digit, so a line costs no allocation of its own (the hit path makes one per request).
    public mutating func append(_ record: AccessRecord, to buffer: inout [UInt8]) {
        let milliseconds = max(0, Int((record.time * 1_000).rounded()))
        if milliseconds / 1_000 != second {
            second = milliseconds / 1_000
            prefix = Array(Timestamp.secondPrefix(second).utf8)
        }
        func appendTime(to line: inout [UInt8]) {
            line.append(contentsOf: prefix)
            let fraction = milliseconds % 1_000
            line.append(UInt8(ascii: "0") + UInt8(fraction / 100))
            line.append(UInt8(ascii: "0") + UInt8(fraction / 10 % 10))
            line.append(UInt8(ascii: "0") + UInt8(fraction % 10))
            line.append(UInt8(ascii: "Z"))
        }
        if format == .json {
            var json = JSONWriter(capacity: 320)
            json.beginObject()
            json.key("time")
            var time: [UInt8] = [UInt8(ascii: "\"")]
            appendTime(to: &time)
            time.append(UInt8(ascii: "\""))
            json.raw(time)
            json.member("type", string: "access")
            json.member("client", string: record.client)
            json.member("requestId", string: record.requestID)
            json.member("method", string: record.method)
            json.member("target", string: record.target)
            json.member("status", int: record.status)
            json.member("bytes", int: record.bytes)
            json.key("durationMs")
            var number: [UInt8] = []
            Self.appendMilliseconds(record.duration, to: &number)
            json.raw(number)
            json.member("cache", string: record.cache.rawValue)
            json.key("upstreamMs")
            if let upstream = record.upstream {
                number.removeAll(keepingCapacity: true)
                Self.appendMilliseconds(upstream, to: &number)
                json.raw(number)
            } else {
                json.null()
            }
            json.key("userAgent")
            if let agent = record.userAgent { json.string(agent) } else { json.null() }
            json.endObject()
            buffer.append(contentsOf: json.bytes)
        } else {
            appendTime(to: &buffer)
            buffer.append(0x20)
            buffer.append(contentsOf: record.client.utf8)
            buffer.append(0x20)
            buffer.append(contentsOf: record.requestID.utf8)
            buffer.append(contentsOf: [0x20, UInt8(ascii: "\"")])
            Self.appendEscaped(record.method, to: &buffer)
            buffer.append(0x20)
            Self.appendEscaped(record.target, to: &buffer)
            buffer.append(contentsOf: [UInt8(ascii: "\""), 0x20])
            buffer.appendDecimal(record.status)
            buffer.append(0x20)
            buffer.appendDecimal(record.bytes)
            buffer.append(0x20)
            Self.appendMilliseconds(record.duration, to: &buffer)
            buffer.append(0x20)
            buffer.append(contentsOf: record.cache.rawValue.utf8)
            buffer.append(0x20)
            if let upstream = record.upstream {
                Self.appendMilliseconds(upstream, to: &buffer)
            } else {
                buffer.append(UInt8(ascii: "-"))
            }
            if let agent = record.userAgent {
                buffer.append(contentsOf: [0x20, UInt8(ascii: "\"")])
                Self.appendEscaped(agent, to: &buffer)
                buffer.append(UInt8(ascii: "\""))
            } else {
                buffer.append(contentsOf: [0x20, UInt8(ascii: "-")])
            }
        }
        buffer.append(0x0A)
    }

    /// `seconds` in milliseconds with two decimals (`1.04`).
    package static func appendMilliseconds(_ seconds: Double, to line: inout [UInt8]) {
        let hundredths = max(0, Int((seconds * 100_000).rounded()))
        line.appendDecimal(hundredths / 100)
        line.append(UInt8(ascii: "."))
        line.append(UInt8(ascii: "0") + UInt8(hundredths % 100 / 10))
        line.append(UInt8(ascii: "0") + UInt8(hundredths % 10))
    }

    /// Printable ASCII but `"` and `\` as it is; those two with a `\`; anything else `\xHH`.
    private static func appendEscaped(_ text: String, to line: inout [UInt8]) {
        let hex = Array("0123456789abcdef".utf8)
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"): line.append(contentsOf: [0x5C, byte])
            case 0x20...0x7E: line.append(byte)
            default: line.append(contentsOf: [0x5C, UInt8(ascii: "x"), hex[Int(byte >> 4)], hex[Int(byte & 0xF)]])
            }
        }
    }
}
