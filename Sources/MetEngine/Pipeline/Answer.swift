/// What the core answers a request on the loop thread: the response, or the rest of the work.
public enum Answer: Sendable {
    /// The response, decided without leaving the calling thread.
    case ready(Response)
    /// The request waits for entries the memory tier does not hold.
    case suspended(Suspension)
}

/// The rest of a request's work once it needs what only a task can wait for (the tiers below
/// memory: the disk, Redis, the upstream). Holds the route's own state where it stopped; running
/// it resumes the same route code that began on the loop thread.
public struct Suspension: Sendable {
    private let run: @Sendable () async -> Response

    /// - Parameter run: the rest of the work; it owns what it captures.
    public init(_ run: @escaping @Sendable () async -> Response) {
        self.run = run
    }

    /// Does the rest of the work. Runs in a task that is cancelled if the client disconnects; it
    /// still returns a response then (a 499 that nobody reads).
    public func response() async -> Response {
        await run()
    }

    /// This suspension with `transform` applied to its response (a layer around the handlers).
    package func map(_ transform: @escaping @Sendable (Response) -> Response) -> Suspension {
        Suspension { [run] in transform(await run()) }
    }
}
