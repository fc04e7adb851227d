/// The stable, snake_case `code` of every problem document but those for requests the HTTP layer
/// cannot read (its own `HTTPProblemCode`), with its HTTP status and title. Clients may switch on
/// these; never rename one.
public enum ProblemCode: String, Sendable, CaseIterable {
    /// The request target is not valid (bad percent-encoding, not an origin-form path).
    case invalidRequestTarget = "invalid_request_target"
    /// A query parameter this route does not know.
    case unknownParameter = "unknown_parameter"
    /// A query parameter with a malformed value.
    case invalidParameter = "invalid_parameter"
    /// `/objects/{id}` with an ID that is not a positive integer.
    case invalidObjectID = "invalid_object_id"
    /// `/images/{path}` with a path that is not one of the image host's shapes.
    case invalidImagePath = "invalid_image_path"
    /// `/iiif/{id}/{n}/…` that is not the IIIF Image API's syntax, or asks for a region or size the
    /// picture cannot give (outside it, larger than it without `^`, past its bounds).
    case invalidIIIFRequest = "invalid_iiif_request"
    /// A purge (`DELETE /cache/…`) from a client that is not on this machine and has not sent the
    /// `--admin-token` as a bearer token.
    case forbidden = "forbidden"
    /// No route has this path.
    case routeNotFound = "route_not_found"
    /// The Met answered 404 for this object (either of its two messages).
    case objectNotFound = "object_not_found"
    /// `/random` found nothing to answer: the filter's ID list is empty, or no drawn record met
    /// the filter within the bound on draws.
    case noMatch = "no_match"
    /// `/iiif/{id}/manifest.json` for an object that is not in the public domain: the Met
    /// publishes no images of it.
    case notPublicDomain = "not_public_domain"
    /// `/iiif/{id}/manifest.json` for a public-domain object whose record has no image URL.
    case noImages = "no_images"
    /// The image host has no picture at this path.
    case imageNotFound = "image_not_found"
    /// A `Range` none of whose bytes the picture has (416, with `Content-Range: bytes */length`).
    case rangeNotSatisfiable = "range_not_satisfiable"
    /// The route exists but not for this method; `Allow` lists the ones it has.
    case methodNotAllowed = "method_not_allowed"
    /// The request body is larger than the server accepts.
    case bodyTooLarge = "body_too_large"
    /// The request target is longer than the server accepts.
    case uriTooLong = "uri_too_long"
    /// The request header fields are larger than the server accepts.
    case headersTooLarge = "headers_too_large"
    /// An unexpected fault in the server; the log has the detail.
    case internalError = "internal_error"
    /// The upstream could not be reached (connection refused, DNS, TLS, reset).
    case upstreamUnreachable = "upstream_unreachable"
    /// The upstream answered with an error status the server cannot pass on as such.
    case upstreamError = "upstream_error"
    /// The upstream answered 200 with a body that is not what the route expects.
    case upstreamMalformed = "upstream_malformed"
    /// The upstream answered 503 (maintenance or outage).
    case upstreamUnavailable = "upstream_unavailable"
    /// The upstream's firewall is blocking this server (a 403 HTML page); retry after `Retry-After`.
    case upstreamBlocked = "upstream_blocked"
    /// The upstream did not answer in time.
    case upstreamTimeout = "upstream_timeout"
    /// The server is shutting down and no longer starts new work.
    case shuttingDown = "shutting_down"
    /// `GET /cache/snapshot` on a server that keeps no persistent cache (`--disk-cache-size 0`, or
    /// its file could not be opened).
    case noPersistentCache = "no_persistent_cache"
    /// `GET /changes?since=` with a cursor the change log no longer reaches: older than the changes
    /// it keeps, or from another cache file (the cache was reset or replaced); start again without
    /// `since`.
    case cursorExpired = "cursor_expired"
    /// The request needs the Met while its client already has `--client-queue` fetches waiting for
    /// their turn; retry after `Retry-After`. Answers from the cache are never refused.
    case tooManyRequests = "too_many_requests"
    /// A IIIF image request in the API's syntax for a feature this server does not offer (a turn
    /// that is not a multiple of 90 degrees, a format other than jpg, png and webp).
    case iiifFeatureNotSupported = "iiif_feature_not_supported"
    /// A picture the image host sent that could not be decoded or a derivative of it encoded.
    case imageNotDerivable = "image_not_derivable"

    /// The HTTP status that goes with the code.
    public var status: Int {
        switch self {
        case .invalidRequestTarget, .unknownParameter, .invalidParameter, .invalidObjectID, .invalidImagePath,
            .invalidIIIFRequest:
            400
        case .forbidden: 403
        case .routeNotFound, .objectNotFound, .noMatch, .notPublicDomain, .noImages, .imageNotFound,
            .noPersistentCache:
            404
        case .methodNotAllowed: 405
        case .cursorExpired: 410
        case .bodyTooLarge: 413
        case .uriTooLong: 414
        case .rangeNotSatisfiable: 416
        case .tooManyRequests: 429
        case .headersTooLarge: 431
        case .internalError: 500
        case .iiifFeatureNotSupported: 501
        case .upstreamUnreachable, .upstreamError, .upstreamMalformed, .imageNotDerivable: 502
        case .upstreamUnavailable, .upstreamBlocked, .shuttingDown: 503
        case .upstreamTimeout: 504
        }
    }

    /// A short, fixed summary of the problem type (RFC 9457 `title`).
    public var title: String {
        switch self {
        case .invalidRequestTarget: "Invalid request target"
        case .unknownParameter: "Unknown query parameter"
        case .invalidParameter: "Invalid query parameter"
        case .invalidObjectID: "Invalid object ID"
        case .invalidImagePath: "Invalid image path"
        case .invalidIIIFRequest: "Invalid IIIF image request"
        case .forbidden: "Forbidden"
        case .routeNotFound: "No such route"
        case .objectNotFound: "Object not found"
        case .noMatch: "No object matches"
        case .notPublicDomain: "Not in the public domain"
        case .noImages: "No images"
        case .imageNotFound: "Image not found"
        case .noPersistentCache: "No persistent cache"
        case .cursorExpired: "Change cursor expired"
        case .rangeNotSatisfiable: "Range not satisfiable"
        case .methodNotAllowed: "Method not allowed"
        case .bodyTooLarge: "Request body too large"
        case .uriTooLong: "Request target too long"
        case .headersTooLarge: "Request header fields too large"
        case .internalError: "Internal server error"
        case .upstreamUnreachable: "Upstream unreachable"
        case .upstreamError: "Upstream error"
        case .upstreamMalformed: "Upstream sent a malformed response"
        case .upstreamUnavailable: "Upstream unavailable"
        case .upstreamBlocked: "Upstream is blocking requests"
        case .upstreamTimeout: "Upstream timed out"
        case .shuttingDown: "Server shutting down"
        case .tooManyRequests: "Too many requests waiting for the Met"
        case .iiifFeatureNotSupported: "IIIF feature not supported"
        case .imageNotDerivable: "Image could not be derived"
        }
    }
}
