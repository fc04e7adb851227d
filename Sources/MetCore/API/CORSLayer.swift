/// The layer around the route handlers that makes every answer usable from a browser page on
/// another origin (`--cors-origin`): adds `Access-Control-Allow-Origin` and the exposed headers to
/// each response, and answers preflights. Any thread.
struct CORSLayer: Sendable {
    /// The methods the reading routes answer (all but the purge routes, `Route.allowedMethods`).
    static let allowedMethods = "GET, HEAD, OPTIONS"

    /// `--cors-origin`.
    let origin: String

    /// `answer` with the CORS fields, now or when its suspension ends.
    func wrap(_ answer: Answer) -> Answer {
        switch answer {
        case .ready(let response): .ready(finish(response))
        case .suspended(let suspension): .suspended(suspension.map { [self] in finish($0) })
        }
    }

    /// `response` with the CORS fields. A shared response is derived once: every request sharing
    /// it gets the same derived response, itself shared (see `Response.shared`).
    func finish(_ response: Response) -> Response {
        if let shared = response.shared, let derived = shared.derived.withLock({ $0 }) { return derived }
        var finished = response
        finished.headers.append("Access-Control-Allow-Origin", origin)
        finished.headers.append("Access-Control-Expose-Headers", "ETag, Age, Cache-Status, Retry-After")
        if let shared = response.shared {
            finished.shared = SharedResponse()
            shared.derived.withLock { $0 = finished }
        }
        return finished
    }

    /// The answer to a CORS preflight (`OPTIONS`) for a known route that answers `methods`, given
    /// the request's headers.
    func preflight(_ request: Request, methods: String) -> Response {
        var headers: HTTPFields = [
            "Allow": methods,
            "Access-Control-Allow-Methods": methods,
            "Access-Control-Max-Age": "86400",
        ]
        headers.append(
            "Access-Control-Allow-Headers", CORSHeaders.allowed(for: request.headers["Access-Control-Request-Headers"]))
        return Response(status: 204, headers: headers)
    }
}
