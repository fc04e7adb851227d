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
    private var prefix = ""

    public init(format: LogFormat) {
        self.format = format
    }

    /// The line for `record`, newline included.
    public mutating func bytes(for record: AccessRecord) -> [UInt8] {
        let milliseconds = max(0, Int((record.time * 1_000).rounded()))
        if milliseconds / 1_000 != second {
            second = milliseconds / 1_000
            prefix = Timestamp.secondPrefix(second)
        }
        let time = prefix + Timestamp.millisecondSuffix(milliseconds % 1_000)
        var line: [UInt8]
        if format == .json {
            var json = JSONWriter(capacity: 320)
            json.beginObject()
            json.member("time", string: time)
            json.member("type", string: "access")
            json.member("client", string: record.client)
            json.member("requestId", string: record.requestID)
            json.member("method", string: record.method)
            json.member("target", string: record.target)
            json.member("status", int: record.status)
            json.member("bytes", int: record.bytes)
            json.key("durationMs")
            json.raw(Self.milliseconds(record.duration).utf8)
            json.member("cache", string: record.cache.rawValue)
            json.key("upstreamMs")
            if let upstream = record.upstream { json.raw(Self.milliseconds(upstream).utf8) } else { json.null() }
            json.key("userAgent")
            if let agent = record.userAgent { json.string(agent) } else { json.null() }
            json.endObject()
            line = json.bytes
        } else {
            line = []
            line.reserveCapacity(200 + record.target.utf8.count)
            line.append(contentsOf: time.utf8)
            line.append(0x20)
            line.append(contentsOf: record.client.utf8)
            line.append(0x20)
            line.append(contentsOf: record.requestID.utf8)
            line.append(contentsOf: " \"".utf8)
            Self.appendEscaped(record.method, to: &line)
            line.append(0x20)
            Self.appendEscaped(record.target, to: &line)
            line.append(contentsOf: "\" \(record.status) \(record.bytes) ".utf8)
            line.append(contentsOf: Self.milliseconds(record.duration).utf8)
            line.append(0x20)
            line.append(contentsOf: record.cache.rawValue.utf8)
            line.append(0x20)
            line.append(contentsOf: (record.upstream.map(Self.milliseconds) ?? "-").utf8)
            if let agent = record.userAgent {
                line.append(contentsOf: " \"".utf8)
                Self.appendEscaped(agent, to: &line)
                line.append(UInt8(ascii: "\""))
            } else {
                line.append(contentsOf: " -".utf8)
            }
        }
        line.append(0x0A)
        return line
    }

    /// `seconds` in milliseconds with two decimals (`1.04`).
    static func milliseconds(_ seconds: Double) -> String {
        let hundredths = max(0, Int((seconds * 100_000).rounded()))
        let fraction = hundredths % 100
        return "\(hundredths / 100).\(fraction < 10 ? "0" : "")\(fraction)"
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
