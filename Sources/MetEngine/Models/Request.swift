/// An HTTP request as the core sees it: no sockets, no libevent. Built by the HTTP layer on the
/// loop thread, or by tests directly.
public struct Request: Sendable {
    /// The request method as sent (`GET`, `HEAD`, …), upper-case.
    public var method: String
    /// The request target exactly as sent (`/objects/1?fields=title`), still percent-encoded.
    public var target: String
    /// Request header fields.
    public var headers: HTTPFields
    /// The request body; empty for the GET requests this server serves.
    public var body: [UInt8]
    /// The other end of the connection, as the HTTP layer saw it when it accepted the connection.
    /// Unknown unless the HTTP layer says so: what depends on it (the purge routes) is refused to
    /// a request that does not know, and its upstream share is that of every such request.
    public var peer = RequestPeer.unknown
    /// The request's ID, which the HTTP layer sends as `X-Request-Id` and logs; problem documents
    /// carry it as `requestId`. Nil for requests made in process (the CLI, tests).
    public var requestID: String?

    public init(
        method: String = "GET", target: String, headers: HTTPFields = HTTPFields(), body: [UInt8] = [],
        peer: RequestPeer = .unknown, requestID: String? = nil
    ) {
        self.method = method
        self.target = target
        self.headers = headers
        self.body = body
        self.peer = peer
        self.requestID = requestID
    }

    /// A GET request for `target`, for tests and the CLI.
    public static func get(_ target: String, headers: HTTPFields = HTTPFields()) -> Request {
        Request(method: "GET", target: target, headers: headers)
    }
}
