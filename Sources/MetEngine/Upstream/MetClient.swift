import Foundation

/// Calls one upstream host for an `UpstreamRequest` (a `MetResource` of the API, an
/// `ImageResource` of the image host) and has the request judge the reply.
///
/// Each host has a client of its own, with its own breaker, pacer and group budget: a block of
/// one host pauses that host's calls only.
///
/// Politely: no call while the firewall blocks this server (the monitor's breaker), every attempt
/// through the one pacer, retries only for failures another attempt may cure (`RetryPolicy`),
/// and never past the fetch's deadline. Records every attempt in the monitor.
///
/// With a shared tier, the pacer's rate and burst are the budget of the whole group: each attempt
/// also takes a token of the group's budget there, and a block this instance sees opens every
/// instance's breaker. While the shared tier is unavailable, attempts take their tokens from the
/// fallback pacer instead, at this instance's conservative share.
public struct MetClient: Sendable {
    /// Where attempts go.
    package let upstream: any Upstream
    private let monitor: UpstreamMonitor
    private let pacer: UpstreamPacer
    private let retryPolicy: RetryPolicy
    /// Seconds one attempt may take.
    private let upstreamTimeout: Double
    /// Seconds one fetch may take in all, the default deadline.
    private let requestTimeout: Double
    private let time: any TimeSource
    /// Bounds each attempt without a sleeping task per call.
    private let deadlines: DeadlineTimer
    private let logger: Logger
    /// Where each attempt's endpoint, outcome and duration are counted (`/metrics`).
    private let metrics: ServerMetrics
    /// The group's budget and breaker, and the pacer used while it is unavailable.
    private let group: (tier: any SharedTier, fallback: UpstreamPacer)?
    /// The name of this host's budget and breaker in the shared tier ("" for the API's).
    package let budget: String
    /// What the log calls the host (`the Met`, `the Met's image host`).
    private let host: String

    /// - Parameters:
    ///   - monitor: the breaker and call figures, shared by every client of this upstream.
    ///   - pacer: the one pacer every call to this upstream goes through, built where the
    ///     application is assembled.
    ///   - retryPolicy: which failures are tried again, and the pauses between attempts.
    ///   - attemptTimeout: seconds one attempt may take (`--upstream-timeout`).
    ///   - fetchTimeout: seconds one fetch may take in all, retries included, unless the caller
    ///     gives a deadline (`--request-timeout`).
    ///   - time: the clock for deadlines, pacing and back-off.
    ///   - metrics: counts each attempt by endpoint and outcome, with its duration.
    ///   - group: the shared tier whose budget and breaker the group's instances share, and the
    ///     pacer that takes over while it is unavailable; nil for a server on its own.
    ///   - budget: the name of this host's budget and breaker in the shared tier: "" for the API,
    ///     another name for each other host.
    ///   - host: what log lines call the host.
    public init(
        upstream: any Upstream, monitor: UpstreamMonitor, pacer: UpstreamPacer, retryPolicy: RetryPolicy,
        attemptTimeout: Double, fetchTimeout: Double, time: any TimeSource, logger: Logger,
        metrics: ServerMetrics = ServerMetrics(), group: (tier: any SharedTier, fallback: UpstreamPacer)? = nil,
        budget: String = "", host: String = "the Met"
    ) {
        self.budget = budget
        self.host = host
        self.metrics = metrics
        self.group = group
        self.upstream = upstream
        self.monitor = monitor
        self.pacer = pacer
        self.retryPolicy = retryPolicy
        upstreamTimeout = attemptTimeout
        requestTimeout = fetchTimeout
        self.time = time
        deadlines = DeadlineTimer(time: time)
        self.logger = logger
    }

    /// Fetches `request`: refuses at once with `.blocked` while the firewall blocks this server
    /// (no upstream call), otherwise waits for the pacer, makes one attempt, judges it, and
    /// retries per the policy while the next attempt could still start before `deadline`.
    ///
    /// - Parameters:
    ///   - deadline: seconds since 1970 after which the fetch gives up; default now +
    ///     `upstream.requestTimeout`. Each attempt is also bounded by `upstream.timeout`.
    ///   - demand: whose fetch it is, for the pacer's turns and client limits; nil for the
    ///     server's own work.
    /// - Returns: the answer, or the last attempt's failure; `.timeout` when the deadline passed
    ///   before a first attempt could start; `.blocked` when a block began meanwhile;
    ///   `.clientQueueFull` when the pacer turned the first attempt away; `.cancelled` when the
    ///   task was cancelled.
    public func fetch<Resource: UpstreamRequest>(
        _ resource: Resource, deadline: Double? = nil, demand: UpstreamDemand? = nil
    ) async -> Result<Resource.Answer, UpstreamError> {
        let deadline = deadline ?? time.now() + requestTimeout
        var attempt = 0
        var lastFailure: UpstreamError?
        while true {
            attempt += 1
            if monitor.blockedUntil(at: time.now()) != nil { return .failure(.blocked) }
            let result: Result<Resource.Answer, UpstreamError>
            do {
                let number = attempt
                let asked = time.now()
                // A retry keeps the place the first attempt was given: only a new fetch is refused.
                result = try await pacer.run(deadline: deadline, demand: demand, mayRefuse: attempt == 1) {
                    () async throws(UpstreamError) in
                    let waited = time.now() - asked
                    if waited >= 0.001 {
                        logger.debug("pacer: \(resource.cacheKey) waited \(Self.milliseconds(waited)) for its turn")
                    }
                    try await groupTurn(until: deadline)
                    // A block may have begun while this call waited for its turn.
                    if monitor.blockedUntil(at: time.now()) != nil { throw .blocked }
                    let limit = min(time.now() + upstreamTimeout, deadline)
                    return await self.attempt(resource, number: number, until: limit)
                }
            } catch {
                // The pacer's verdict: this attempt never reached the upstream.
                if error == .timeout, let lastFailure { return .failure(lastFailure) }
                if error == .timeout {
                    logger.warning("upstream \(resource.cacheKey): no turn with the pacer in time")
                }
                if case .clientQueueFull = error {
                    logger.debug("pacer: \(resource.cacheKey) refused: its clients' queues are full")
                }
                return .failure(error)
            }
            guard case .failure(let error) = result, RetryPolicy.isRetryable(error),
                attempt < retryPolicy.maxAttempts
            else { return result }
            let retryAt = time.now() + retryPolicy.delay(beforeRetry: attempt)
            guard retryAt < deadline else { return result }
            lastFailure = error
            do {
                try await time.sleep(until: retryAt)
            } catch {
                return .failure(.cancelled)
            }
        }
    }

    /// Seconds one fetch may take in all, the default deadline (`--request-timeout`).
    package var fetchTimeout: Double { requestTimeout }

    /// Takes a token of the group's budget, waiting on the clock as long as the shared tier says;
    /// while the tier is unavailable, takes one from the fallback pacer. Returns at once without a
    /// group. Throws `.timeout` when no token comes before `deadline`, `.blocked` when a block
    /// began meanwhile, `.cancelled` when the task was cancelled.
    private func groupTurn(until deadline: Double) async throws(UpstreamError) {
        guard let group else { return }
        while true {
            if monitor.blockedUntil(at: time.now()) != nil { throw .blocked }
            switch await group.tier.takeToken(ratePerSecond: pacer.ratePerSecond, burst: pacer.burst, budget: budget) {
            case .granted:
                return
            case .wait(let seconds):
                let next = time.now() + seconds
                guard next < deadline else { throw .timeout }
                do {
                    try await time.sleep(until: next)
                } catch {
                    throw .cancelled
                }
            case .unavailable:
                try await group.fallback.run(deadline: deadline) { () async throws(UpstreamError) in }
                return
            }
        }
    }

    /// One attempt, bounded by `limit` (seconds since 1970), judged and recorded in the monitor.
    private func attempt<Resource: UpstreamRequest>(
        _ resource: Resource, number: Int, until limit: Double
    ) async -> Result<Resource.Answer, UpstreamError> {
        let started = time.now()
        let result = await reply(for: resource, until: limit).flatMap { resource.judge($0) }
        let outcome: UpstreamOutcome
        switch result {
        case .success(let answer):
            outcome = Resource.outcome(of: answer)
            logger.debug(
                "upstream \(resource.cacheKey): \(Resource.logSummary(of: answer)) in "
                    + "\(Self.milliseconds(time.now() - started)) (attempt \(number))")
            if monitor.record(outcome, at: time.now()) == .ended {
                logger.info("upstream: \(host) answers again after its firewall's block (\(resource.cacheKey))")
            }
        case .failure(let error):
            outcome = Self.outcome(of: error)
            record(error, for: resource.cacheKey, attempt: number)
        }
        metrics.observeUpstream(resource.kind, outcome, seconds: time.now() - started)
        return result
    }

    /// How an attempt that failed with `error` is counted.
    private static func outcome(of error: UpstreamError) -> UpstreamOutcome {
        switch error {
        case .unreachable: .unreachable
        case .timeout: .timeout
        case .blocked: .blocked
        case .status(let code): code >= 500 ? .serverError : .clientError
        case .malformed: .malformed
        case .cancelled, .clientQueueFull: .cancelled
        }
    }

    /// The upstream's reply, or `.timeout` when the clock reaches `limit` first (the call is then
    /// cancelled). The wait is on the injected clock, so tests control it.
    private func reply(
        for resource: some UpstreamRequest, until limit: Double
    ) async -> Result<UpstreamReply, UpstreamError> {
        await withTaskGroup(of: Result<UpstreamReply, UpstreamError>?.self) { group in
            group.addTask { [upstream] in
                do throws(UpstreamError) {
                    return .success(
                        try await upstream.get(
                            path: resource.path, query: resource.query, conditions: resource.conditions))
                } catch {
                    return .failure(error)
                }
            }
            group.addTask { [deadlines] in
                // false: the call ended first, or the fetch was cancelled.
                await deadlines.wait(until: limit) ? .failure(.timeout) : nil
            }
            var first: Result<UpstreamReply, UpstreamError> = .failure(.cancelled)
            for await result in group {
                if let result {
                    first = result
                    break
                }
            }
            group.cancelAll()
            return first
        }
    }

    private func record(_ error: UpstreamError, for key: String, attempt: Int) {
        let text = "\(key): \(error.logDescription)"
        let change = monitor.record(Self.outcome(of: error), at: time.now(), error: error == .cancelled ? nil : text)
        if case .started(let until, let cooldown) = change {
            logger.warning(
                "upstream: \(host)'s firewall blocked this server (\(key)); every call to it "
                    + "paused for \(Int(cooldown.rounded())) s, until \(Timestamp.rfc3339(until))")
        }
        // Calls queued behind a blocked one must not go out now; they fail like it at once. The
        // other instances of the group stop too.
        if error == .blocked {
            pacer.failWaiting(with: .blocked)
            group?.fallback.failWaiting(with: .blocked)
            let now = time.now()
            if let until = monitor.blockedUntil(at: now) { group?.tier.announceBlock(for: until - now, budget: budget) }
        }
        if error != .cancelled { logger.warning("upstream \(text) (attempt \(attempt) of \(retryPolicy.maxAttempts))") }
    }
}

extension UpstreamError {
    /// One line for the log and for problem `detail`s.
    public var logDescription: String {
        switch self {
        case .unreachable(let reason): "unreachable (\(reason))"
        case .timeout: "timed out"
        case .blocked: "blocked by the firewall (403 HTML page)"
        case .status(let code): "answered HTTP \(code)"
        case .malformed(let reason): "malformed answer: \(reason)"
        case .cancelled: "cancelled"
        case .clientQueueFull(let seconds): "not sent: the client's queue is full (retry after \(Int(seconds)) s)"
        }
    }
}

extension MetClient {
    /// `seconds` as `123 ms`, for log lines.
    package static func milliseconds(_ seconds: Double) -> String {
        "\(Int((seconds * 1_000).rounded())) ms"
    }
}
