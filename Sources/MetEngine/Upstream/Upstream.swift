/// One answer from the upstream, before the core has judged it.
public struct UpstreamReply: Sendable, Equatable {
    /// The HTTP status.
    public var status: Int
    /// The `Content-Type` the upstream sent, if any.
    public var contentType: String?
    /// The decoded (un-gzipped) body bytes.
    public var body: [UInt8]
    /// The `ETag` and `Last-Modified` the upstream sent (the image host sends both; the API none).
    public var validators: UpstreamValidators
    /// The `Cache-Control` field the upstream sent, if any.
    public var cacheControl: String?
    /// The upstream's own gzip encoding of `body`, as it came, when it sent one: it was inflated
    /// to `body` (so it holds exactly `body`), and serves as the kept gzip copy without
    /// compressing the body again.
    public var gzipped: [UInt8]?

    public init(
        status: Int, contentType: String?, body: [UInt8], validators: UpstreamValidators = UpstreamValidators(),
        cacheControl: String? = nil, gzipped: [UInt8]? = nil
    ) {
        self.status = status
        self.contentType = contentType
        self.body = body
        self.validators = validators
        self.cacheControl = cacheControl
        self.gzipped = gzipped
    }
}

/// An upstream's validators of one representation (RFC 9110 §8.8): what a reply carried, and what a
/// conditional request sends back (`If-None-Match`, `If-Modified-Since`) to learn whether the copy
/// held is still current.
public struct UpstreamValidators: Sendable, Hashable {
    /// The entity tag, as sent (quotes and any `W/` included).
    public var etag: String?
    /// The `Last-Modified` date, as sent.
    public var lastModified: String?

    public init(etag: String? = nil, lastModified: String? = nil) {
        self.etag = etag
        self.lastModified = lastModified
    }

    /// Neither validator: a conditional request cannot be made.
    public var isEmpty: Bool { etag == nil && lastModified == nil }
}

/// Why an upstream call produced no usable answer.
public enum UpstreamError: Error, Sendable, Equatable {
    /// No HTTP answer at all: connection refused or reset, DNS, TLS. The text is for the log.
    case unreachable(String)
    /// No answer within the upstream timeout.
    case timeout
    /// The firewall's 403 HTML page: the upstream is refusing this server for a while.
    case blocked
    /// An HTTP status the route cannot use (5xx, or a 4xx it did not expect).
    case status(Int)
    /// A 200 whose body is not the JSON the route expects. The text is for the log.
    case malformed(String)
    /// The call was cancelled because nobody waits for it any more.
    case cancelled
    /// Never sent: it would have had to wait in the pacer, and every client that needed it already
    /// has `--client-queue` calls waiting there (`UpstreamPacer`). The client may ask again after
    /// `retryAfter` seconds; answered with a 429.
    case clientQueueFull(retryAfter: Double)
}

/// Where the server gets Met data from: the real API over HTTP(S), or a fixture directory.
/// Implementations only transport; judging statuses and bodies is `MetClient`'s job.
public protocol Upstream: Sendable {
    /// Performs `GET path?query` against the upstream.
    ///
    /// - Parameters:
    ///   - path: a Met path, such as `/public/collection/v1/objects/436535`.
    ///   - query: query items, already in the order they must be sent.
    ///   - conditions: the validators of a copy held, sent as `If-None-Match` and
    ///     `If-Modified-Since`: an upstream that honours them answers 304 without a body while
    ///     that copy is current. Nil: an unconditional request.
    /// - Returns: whatever HTTP answer came back, any status.
    /// - Throws: `.unreachable`, `.timeout` or `.cancelled` when no HTTP answer arrived.
    func get(
        path: String, query: [RequestTarget.QueryItem], conditions: UpstreamValidators?
    ) async throws(UpstreamError) -> UpstreamReply

    /// Where this upstream points, for `/health` and the start-up log.
    var location: String { get }
}

extension Upstream {
    /// An unconditional `GET path?query` (see `get(path:query:conditions:)`).
    public func get(path: String, query: [RequestTarget.QueryItem]) async throws(UpstreamError) -> UpstreamReply {
        try await get(path: path, query: query, conditions: nil)
    }
}
