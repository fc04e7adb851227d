/// The layer around the route handlers that makes every answer usable from a browser page on
/// another origin (`--cors-origin`): adds `Access-Control-Allow-Origin` and the exposed headers to
/// each response, and answers preflights. Any thread.
struct CORSLayer: Sendable {
    /// The methods the reading routes answer (all but the purge routes, `Route.allowedMethods`).
    static let allowedMethods = "GET, HEAD, OPTIONS"
    /// The response fields a page may read beyond the CORS-safelisted ones.
    static let exposedHeaders = "ETag, Age, Cache-Status, Retry-After, Link, X-Request-Id"

    /// `--cors-origin`.
    let policy: CORSPolicy

    /// `answer` to `request` with the CORS fields, now or when its suspension ends.
    func wrap(_ answer: Answer, for request: Request) -> Answer {
        // Under `*` the answer is the same for every origin: no need to look for the field.
        let origin: String?
        if case .origins = policy { origin = request.headers["Origin"] } else { origin = nil }
        switch answer {
        case .ready(let response): return .ready(finish(response, origin: origin))
        case .suspended(let suspension): return .suspended(suspension.map { [self] in finish($0, origin: origin) })
        }
    }

    /// `response` with the CORS fields for a request from `origin` (its `Origin` field; nil when it
    /// sent none or could not be read). Under `*` every response allows any origin; under a list,
    /// a listed origin is echoed, any other gets no permission, and every response says it varies
    /// by `Origin` so that no cache hands one origin's answer to another. A shared response is
    /// derived once per origin: every request sharing it from that origin gets the same derived
    /// response, itself shared (see `Response.shared`).
    func finish(_ response: Response, origin: String?) -> Response {
        let allowed: String?
        let slot: Int
        switch policy {
        case .any:
            allowed = "*"
            slot = 0
        case .origins(let origins):
            let index = origin.flatMap { origins.firstIndex(of: $0) }
            allowed = index.map { origins[$0] }
            slot = index.map { $0 + 1 } ?? 0
        }
        if let shared = response.shared, let derived = shared.derived.withLock({ $0[slot] }) { return derived }
        var finished = response
        if let allowed {
            finished.headers.append("Access-Control-Allow-Origin", allowed)
            finished.headers.append("Access-Control-Expose-Headers", Self.exposedHeaders)
        }
        if case .origins = policy { Self.addVary("Origin", to: &finished.headers) }
        if let shared = response.shared {
            finished.shared = SharedResponse()
            shared.derived.withLock { $0[slot] = finished }
        }
        return finished
    }

    /// The answer to a CORS preflight (`OPTIONS`) for a known route that answers `methods`, given
    /// the request's headers. It echoes the headers asked for, so it varies by them.
    func preflight(_ request: Request, methods: String) -> Response {
        var headers: HTTPFields = [
            "Allow": methods,
            "Access-Control-Allow-Methods": methods,
            "Access-Control-Max-Age": "86400",
        ]
        headers.append(
            "Access-Control-Allow-Headers", CORSHeaders.allowed(for: request.headers["Access-Control-Request-Headers"]))
        headers.append("Vary", "Access-Control-Request-Headers")
        return Response(status: 204, headers: headers)
    }

    /// Adds `token` to the response's `Vary` (one field line, as linters prefer).
    static func addVary(_ token: String, to headers: inout HTTPFields) {
        if let vary = headers["Vary"] {
            headers.set("Vary", "\(vary), \(token)")
        } else {
            headers.append("Vary", token)
        }
    }
}
