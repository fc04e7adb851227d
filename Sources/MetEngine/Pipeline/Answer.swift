/// What the core answers a request on the loop thread: the response, or the rest of the work.
public enum Answer: Sendable {
    /// The response, decided without leaving the calling thread.
    case ready(Response)
    /// The request waits for entries the memory tier does not hold.
    case suspended(Suspension)

    /// This answer with `transform` applied to its response, now or once the suspension ends.
    package func map(_ transform: @escaping @Sendable (Response) -> Response) -> Answer {
        switch self {
        case .ready(let response): .ready(transform(response))
        case .suspended(let suspension): .suspended(suspension.map(transform))
        }
    }

    /// This answer, except that a response `failed` picks out is replaced by what `instead` makes
    /// of it, in a task (now, or once the suspension ends). A suspension that awaits a reply
    /// keeps doing so.
    package func recovering(
        when failed: @escaping @Sendable (Response) -> Bool,
        with instead: @escaping @Sendable (Response) async -> Response
    ) -> Answer {
        switch self {
        case .ready(let response): failed(response) ? .suspended(Suspension { await instead(response) }) : self
        case .suspended(let suspension): .suspended(suspension.recovering(when: failed, with: instead))
        }
    }
}

/// The rest of a request's work once it needs what the memory tier does not hold (the disk, Redis,
/// the upstream). Holds the route's own state where it stopped; running it resumes the same route
/// code that began on the loop thread.
///
/// Two forms. Most run in a task (`init(_:)`). One that waits for a single reply without a task
/// (`init(awaiting:)`: a Redis read) is started on the loop thread and told its next answer: the
/// response, or a suspension that runs in a task after all (the reply did not do).
public struct Suspension: Sendable {
    /// Starts the wait, on the loop thread; the handler is told the answer once, from any thread.
    package typealias Start = @Sendable (_ then: @escaping @Sendable (Answer) -> Void) -> Void

    private enum Rest: Sendable {
        case task(@Sendable () async -> Response)
        case reply(Start)
    }

    private let rest: Rest

    /// - Parameter run: the rest of the work, in a task; it owns what it captures.
    public init(_ run: @escaping @Sendable () async -> Response) {
        rest = .task(run)
    }

    /// - Parameter start: begins the wait for a reply on the loop thread, without blocking, and
    ///   tells its handler the answer exactly once.
    @usableFromInline
    package init(awaiting start: @escaping @Sendable (_ then: @escaping @Sendable (Answer) -> Void) -> Void) {
        rest = .reply(start)
    }

    /// The wait to begin on the loop thread, for a suspension that awaits a reply; nil for one
    /// that runs in a task (`response()`).
    package var start: Start? {
        guard case .reply(let start) = rest else { return nil }
        return start
    }

    /// Does the rest of the work. Runs in a task that is cancelled if the client disconnects; it
    /// still returns a response then (a 499 that nobody reads). A suspension that awaits a reply
    /// begins its wait here (tests, the command line: the HTTP layer begins it on its loop).
    public func response() async -> Response {
        switch rest {
        case .task(let run):
            return await run()
        case .reply(let start):
            let answer = await awaitDelivery(start)
            switch answer {
            case .ready(let response): return response
            case .suspended(let suspension): return await suspension.response()
            }
        }
    }

    /// This suspension, with a response `failed` picks out replaced (see `Answer.recovering`).
    package func recovering(
        when failed: @escaping @Sendable (Response) -> Bool,
        with instead: @escaping @Sendable (Response) async -> Response
    ) -> Suspension {
        switch rest {
        case .task(let run):
            Suspension {
                let response = await run()
                return failed(response) ? await instead(response) : response
            }
        case .reply(let start):
            Suspension(awaiting: { then in start { then($0.recovering(when: failed, with: instead)) } })
        }
    }

    /// This suspension with `transform` applied to its response (a layer around the handlers).
    package func map(_ transform: @escaping @Sendable (Response) -> Response) -> Suspension {
        switch rest {
        case .task(let run): Suspension { transform(await run()) }
        case .reply(let start): Suspension(awaiting: { then in start { then($0.map(transform)) } })
        }
    }
}
