/// What the cache did for a response: shown in the access log and, as RFC 9211 `Cache-Status`,
/// to the client.
public enum CacheOutcome: String, Sendable {
    /// Not a cacheable route (errors, `/health`, preflight).
    case none = "-"
    /// Served from a fresh entry.
    case hit
    /// Served from a fresh entry that memory did not hold and the persistent tier did.
    case diskHit
    /// Served from a fresh entry that neither local tier held and the shared tier (Redis) did.
    case sharedHit
    /// Fetched from the upstream and stored.
    case miss
    /// Joined another request's upstream fetch for the same key (single flight).
    case collapsed
    /// Served from an expired entry while one background request refreshes it
    /// (stale-while-revalidate).
    case revalidating
    /// Served from an expired entry because the upstream failed (stale-if-error).
    case stale
}

/// An HTTP response from the core: status, header fields and a ready-to-send body.
public struct Response: Sendable {
    /// The status code.
    public var status: Int {
        didSet { shared = nil }
    }
    /// Header fields. The HTTP layer adds `Content-Length`, `Date` and connection handling.
    public var headers: HTTPFields {
        didSet { shared = nil }
    }
    /// When a stored answer was fetched from the Met, in whole seconds since 1970: the HTTP layer
    /// sends it as `Date` (never later than now), so that `Date` plus `Age` is now, as RFC 9111
    /// §4.2.3 reads them and as nginx and Varnish send them. Nil: `Date` is the time of sending.
    public var date: Int? {
        didSet { shared = nil }
    }
    /// The body bytes. For HEAD requests the HTTP layer sends the headers only.
    public var body: [UInt8] {
        didSet { shared = nil }
    }
    /// The body, when it is sent from a file instead (`body` is then empty): a picture the picture
    /// files hold, sent with `sendfile` (or from memory when the file cannot be opened as it is
    /// sent). Never chunked.
    public var fileBody: FileBody? {
        didSet { shared = nil }
    }
    /// The body's length in bytes, wherever it is.
    public var bodyLength: Int { fileBody?.length ?? body.count }
    /// Set when this exact response (status, headers, body) is shared by many requests, such as a
    /// plain hit in the same second (see `Presenter.hit`): later layers may keep what they derive
    /// from it by this identity (the CORS layer its own response, the HTTP layer the encoded
    /// head). Cleared by any change to status, headers or body, so it never stands for other bytes.
    public package(set) var shared: SharedResponse?
    /// For the access log only; the client sees `Cache-Status`.
    public var cacheOutcome: CacheOutcome
    /// The route it answered, for `/metrics` (set by `MetService` once routed).
    public var route: MetricRoute = .none
    /// For the access log only: the client behind a trusted proxy, as its forwarding field names it
    /// (the log shows the connection's peer when nil).
    public var clientAddress: String?
    /// Send the body with chunked transfer-coding instead of `Content-Length`. Only the fake Met
    /// uses it, to behave like the real API.
    public var isChunked: Bool = false

    public init(status: Int, headers: HTTPFields = HTTPFields(), body: [UInt8] = [], cacheOutcome: CacheOutcome = .none)
    {
        self.status = status
        self.headers = headers
        self.body = body
        self.cacheOutcome = cacheOutcome
        self.date = nil
    }

    /// The media type of every JSON body this server sends.
    public static let jsonContentType = "application/json; charset=utf-8"
    /// The media type of RFC 9457 problem documents.
    public static let problemContentType = "application/problem+json"
}

/// The identity of a response shared unchanged by many requests (see `Response.shared`). Layers
/// after the handlers key what they derive from the response by it; it lives as long as some
/// holder of the response does. Any thread.
public final class SharedResponse: Sendable {
    /// What the layer around the handlers made of the response (see `CORSLayer`), once per
    /// slot (the origin it was made for).
    package let derived = Locked<[Int: Response]>([:])

    package init() {}
}
