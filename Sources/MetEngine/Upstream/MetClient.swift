import Foundation

/// An upstream answer the cache can keep: a validated 200, or a Met 404 (negative entry).
public struct CacheableAnswer: Sendable, Equatable {
    /// 200 or 404.
    public var status: Int
    /// The Met's body, byte for byte.
    public var body: [UInt8]
    /// For a 404, the Met's `message` (`ObjectID not found` or `Not a valid object`).
    public var message: String? = nil
    /// For a 200, what validating the body read from it (an object's summary, an ID list).
    public var details: EntryDetails = .none
}

/// Calls the upstream for a `MetResource` and judges the answer: validates 200 bodies, keeps the
/// Met's 404s (both messages) as cacheable answers, treats the firewall's 403 HTML page as
/// "blocked", and turns everything else into an `UpstreamError`.
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
    public init(
        upstream: any Upstream, monitor: UpstreamMonitor, pacer: UpstreamPacer, retryPolicy: RetryPolicy,
        attemptTimeout: Double, fetchTimeout: Double, time: any TimeSource, logger: Logger,
        metrics: ServerMetrics = ServerMetrics(), group: (tier: any SharedTier, fallback: UpstreamPacer)? = nil
    ) {
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

    /// Fetches `resource`: refuses at once with `.blocked` while the firewall blocks this server
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
    public func fetch(
        _ resource: MetResource, deadline: Double? = nil, demand: UpstreamDemand? = nil
    ) async -> Result<CacheableAnswer, UpstreamError> {
        let deadline = deadline ?? time.now() + requestTimeout
        var attempt = 0
        var lastFailure: UpstreamError?
        while true {
            attempt += 1
            if monitor.blockedUntil(at: time.now()) != nil { return .failure(.blocked) }
            let result: Result<CacheableAnswer, UpstreamError>
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
            switch await group.tier.takeToken(ratePerSecond: pacer.ratePerSecond, burst: pacer.burst) {
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
    private func attempt(
        _ resource: MetResource, number: Int, until limit: Double
    ) async -> Result<CacheableAnswer, UpstreamError> {
        let started = time.now()
        let result = await reply(for: resource, until: limit).flatMap { judge($0, for: resource) }
        let outcome: UpstreamOutcome
        switch result {
        case .success(let answer):
            outcome = answer.status == 404 ? .notFound : .ok
            logger.debug(
                "upstream \(resource.cacheKey): \(answer.status), \(answer.body.count) bytes in "
                    + "\(Self.milliseconds(time.now() - started)) (attempt \(number))")
            if monitor.record(outcome, at: time.now()) == .ended {
                logger.info("upstream: the Met answers again after its firewall's block (\(resource.cacheKey))")
            }
        case .failure(let error):
            outcome = Self.outcome(of: error)
            record(error, for: resource, attempt: number)
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
    private func reply(for resource: MetResource, until limit: Double) async -> Result<UpstreamReply, UpstreamError> {
        await withTaskGroup(of: Result<UpstreamReply, UpstreamError>?.self) { group in
            group.addTask { [upstream] in
                do throws(UpstreamError) {
                    return .success(try await upstream.get(path: resource.path, query: resource.query))
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

    /// Classifies one reply. Pure: no I/O, no state.
    package func judge(_ reply: UpstreamReply, for resource: MetResource) -> Result<CacheableAnswer, UpstreamError> {
        switch reply.status {
        case 200:
            return Self.details(of: reply.body, for: resource).map {
                CacheableAnswer(status: 200, body: reply.body, details: $0)
            }
        case 404 where resource.kind == .object:
            guard let error = try? JSONDecoder().decode(MessageBody.self, from: Data(reply.body)) else {
                return .failure(.malformed("404 without a JSON message"))
            }
            return .success(CacheableAnswer(status: 404, body: reply.body, message: error.message))
        case 403 where Self.looksLikeHTML(reply):
            return .failure(.blocked)
        default:
            return .failure(.status(reply.status))
        }
    }

    private func record(_ error: UpstreamError, for resource: MetResource, attempt: Int) {
        let text = "\(resource.cacheKey): \(error.logDescription)"
        let change = monitor.record(Self.outcome(of: error), at: time.now(), error: error == .cancelled ? nil : text)
        if case .started(let until, let cooldown) = change {
            logger.warning(
                "upstream: the Met's firewall blocked this server (\(resource.cacheKey)); every upstream call "
                    + "paused for \(Int(cooldown.rounded())) s, until \(Timestamp.rfc3339(until))")
        }
        // Calls queued behind a blocked one must not go out now; they fail like it at once. The
        // other instances of the group stop too.
        if error == .blocked {
            pacer.failWaiting(with: .blocked)
            group?.fallback.failWaiting(with: .blocked)
            let now = time.now()
            if let until = monitor.blockedUntil(at: now) { group?.tier.announceBlock(for: until - now) }
        }
        if error != .cancelled { logger.warning("upstream \(text) (attempt \(attempt) of \(retryPolicy.maxAttempts))") }
    }

    /// Validates a 200 body for `resource` and returns what it holds; one decoding serves both
    /// (the details are kept in the cache entry). `.malformed` when the body is not what the
    /// resource returns.
    package static func details(of body: [UInt8], for resource: MetResource) -> Result<EntryDetails, UpstreamError> {
        let details = EntryDetails.read(body, kind: resource.kind)
        switch (resource, details) {
        case (.object(let id), .object(let summary)):
            guard summary.objectID == id else {
                return .failure(.malformed("asked for object \(id), got \(summary.objectID)"))
            }
            return .success(details)
        case (.objectList, .ids), (.search, .ids):
            return .success(details)
        case (.departments, _):
            guard (try? JSONDecoder().decode(DepartmentsProbe.self, from: Data(body))) != nil else { break }
            return .success(details)
        default:
            break
        }
        return .failure(.malformed("body is not the expected JSON (\(body.count) bytes)"))
    }

    private static func looksLikeHTML(_ reply: UpstreamReply) -> Bool {
        if let type = reply.contentType?.lowercased(), type.contains("html") { return true }
        let start = reply.body.drop { $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }.first
        return start == UInt8(ascii: "<")
    }

    private struct DepartmentsProbe: Decodable {
        package struct Department: Decodable {
            package let departmentId: Int
            package let displayName: String
        }
        package let departments: [Department]
    }
    /// The Met's error body, `{"message": "…"}`.
    package struct MessageBody: Decodable { let message: String }
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
