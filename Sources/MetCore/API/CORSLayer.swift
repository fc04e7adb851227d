import MetEngine

/// The response layer that makes every answer usable from a browser page on another origin
/// (`--cors-origin`): adds `Access-Control-Allow-Origin` and the exposed headers to each response;
/// and the answer to preflights, which the route table gives. Any thread.
struct CORSLayer: ResponseLayer {
    /// The response fields a page may read beyond the CORS-safelisted ones.
    static let exposedHeaders = "ETag, Age, Cache-Status, Retry-After, Link, X-Request-Id"

    /// `--cors-origin`.
    let policy: CORSPolicy

    /// `response` with the CORS fields for the request of `context` (see `finish(_:origin:)`).
    func finish(_ response: inout Response, _ context: ResponseContext) {
        // Under `*` the answer is the same for every origin: no need to look for the field.
        guard case .origins = policy else { return finish(&response, origin: nil) }
        finish(&response, origin: context.headers["Origin"])
    }

    /// Gives `response` the CORS fields for a request from `origin` (its `Origin` field; nil when it
    /// sent none or could not be read). Under `*` every response allows any origin; under a list,
    /// a listed origin is echoed, any other gets no permission, and every response says it varies
    /// by `Origin` so that no cache hands one origin's answer to another. A shared response is
    /// derived once per origin: every request sharing it from that origin gets the same derived
    /// response, itself shared (see `Response.shared`).
    private func finish(_ response: inout Response, origin: String?) {
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
        let shared = response.shared
        if let shared, let derived = shared.derived.withLock({ $0[slot] }) {
            response = derived
            return
        }
        // Taken out, changed and stored once: each change through `response.headers`, an observed
        // property of another module, would copy every field line, and a copy left in `response`
        // would make even an unshared response's lines copied on the first append.
        var headers = response.headers
        response.headers = HTTPFields()
        headers.reserveCapacity(headers.count + 3)
        if let allowed {
            headers.append("Access-Control-Allow-Origin", allowed)
            headers.append("Access-Control-Expose-Headers", Self.exposedHeaders)
        }
        if case .origins = policy { Self.addVary("Origin", to: &headers) }
        response.headers = headers
        if let shared {
            response.shared = SharedResponse()
            let derived = response
            shared.derived.withLock { $0[slot] = derived }
        }
    }

    /// The answer to a CORS preflight (`OPTIONS`) for a known route that answers `methods`, given
    /// the request's headers. It echoes the headers asked for, so it varies by them.
    static func preflight(_ request: Request, methods: String) -> Response {
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
