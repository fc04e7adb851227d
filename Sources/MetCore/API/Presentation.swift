import MetEngine

/// How an entry is turned into a response for one request: the route's dialect, the projection,
/// and the request's conditional and encoding headers.
struct Presentation: Sendable {
    /// Failures are said the Met's way (`MetDialect`), as the mirror says them.
    var metDialect: Bool
    /// The object ID as the request wrote it, when a 404 entry is the problem `object_not_found`
    /// (`/objects/{id}`); nil elsewhere.
    var object: String?
    /// Top-level members to keep (`fields=`), or nil for the whole body.
    var fields: Set<String>?
    /// The request's `If-None-Match`, if any.
    var ifNoneMatch: String?
    /// The request's `If-Modified-Since`, when it is a GET or HEAD with one such field (RFC 9110
    /// §13.1.3: a recipient ignores it otherwise); read as a date when an answer is made.
    var ifModifiedSince: String?
    /// Whether the client accepts a gzip body (`Accept-Encoding`).
    var acceptsGzip = false

    /// The presentation for `request` (its conditional and encoding headers); see
    /// `RouteRequest.presentation`.
    init(for request: Request, metDialect: Bool, fields: Set<String>?, object: String?) {
        self.metDialect = metDialect
        self.object = object
        self.fields = fields
        ifNoneMatch = request.headers["If-None-Match"]
        let since = request.headers.values(for: "If-Modified-Since")
        if since.count == 1, request.method == "GET" || request.method == "HEAD" { ifModifiedSince = since[0] }
        acceptsGzip = request.headers["Accept-Encoding"].map(Self.acceptsGzip) ?? false
    }

    /// Whether an `Accept-Encoding` value allows gzip: `gzip` (or `*`) listed with a non-zero q.
    static func acceptsGzip(_ value: String) -> Bool {
        var wildcard = false
        for item in value.split(separator: ",") {
            let parts = item.split(separator: ";")
            let coding = (parts.first ?? "").trimmingSpaces().lowercased()
            let quality =
                parts.dropFirst().lazy.map { $0.trimmingSpaces() }
                .first { $0.lowercased().hasPrefix("q=") }
                .flatMap { Double($0.dropFirst(2)) } ?? 1
            if coding == "gzip" || coding == "x-gzip" { return quality > 0 }
            if coding == "*" { wildcard = quality > 0 }
        }
        return wildcard
    }
}
