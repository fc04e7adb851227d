/// Produces responses for requests: the one seam between the core and any HTTP server.
///
/// The HTTP layer calls `respond(to:)` on its loop thread. The answer is either ready (a fresh hit,
/// a 304, a validation error, `/health`) or suspended: the request needs entries the memory tier
/// does not hold, and the HTTP layer runs the suspension in a task, then writes its response.
public protocol Responder: Sendable {
    /// Decides `request` as far as it can without waiting.
    ///
    /// Called on a libevent loop thread: must not block, sleep or do upstream I/O, and starts
    /// nothing: a suspended answer that is never run has no effect. `request` is handed over
    /// (`consuming`): a responder may keep it without copying it.
    func respond(to request: consuming Request) -> Answer

    /// Told by the HTTP layer that `response` was written, `seconds` after its request was read
    /// (or that the HTTP layer itself answered a request it could not read). On the loop thread:
    /// must be cheap and never block.
    func finished(_ response: Response, seconds: Double)

    /// `response`, which the HTTP layer makes itself (for a request it could not read: 400, 408,
    /// 413, 414, 431, 501, 505; or the 503 of a request a shutdown abandoned), with the fields
    /// every answer carries (CORS, for `origin`, the request's `Origin` when it could be read)
    /// and its problem document's `requestId`. On the loop thread.
    func unread(_ response: Response, requestID: String, origin: String?) -> Response
}

extension Responder {
    /// Responders that keep no figures (the fake Met, test doubles) ignore written responses.
    public func finished(_ response: Response, seconds: Double) {}

    /// Responders without fields of their own send the HTTP layer's answer as it is.
    public func unread(_ response: Response, requestID: String, origin: String?) -> Response { response }

    /// The response to `request`, waiting for the upstream when needed (tests, the CLI).
    public func response(to request: Request) async -> Response {
        switch respond(to: request) {
        case .ready(let response): response
        case .suspended(let suspension): await suspension.response()
        }
    }
}
