/// Produces responses for requests: the one seam between the core and any HTTP server.
///
/// The HTTP layer first calls `respondImmediately(to:)` on its loop thread; only when that
/// returns nil does it start a task for `respond(to:)` and post the result back to the loop.
public protocol Responder: Sendable {
    /// Answers without waiting, or returns nil when the answer needs the upstream.
    ///
    /// Called on a libevent loop thread: must not block, sleep or do upstream I/O. Fresh cache
    /// hits, 304s, validation errors and `/health` are answered here.
    func respondImmediately(to request: Request) -> Response?

    /// Answers any request, waiting for the upstream when needed. Runs in a task that is
    /// cancelled if the client disconnects; it must still return a response then.
    func respond(to request: Request) async -> Response
}
