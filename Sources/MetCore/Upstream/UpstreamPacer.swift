/// Paces every call to one upstream: a token bucket (`ratePerSecond`, holding up to `burst`
/// tokens) and an in-flight limit (`concurrency`), served first come, first served.
///
/// A call starts when it is at the head of the queue, fewer than `concurrency` calls are in flight,
/// and a token is in the bucket. It then takes the token and a slot, and gives the slot back when
/// its body returns or throws; the token is spent for good. So in any window of `w` seconds at most
/// `burst + ratePerSecond × w` calls start, and never more than `concurrency` run at once. The Met's
/// firewall blocks clients that hurry (docs/MET-API.md §6), and this is the one place that keeps this server
/// from hurrying.
///
/// The bucket is kept as a theoretical arrival time (GCRA): the moment the next token is due is one
/// stored number, so a wake-up scheduled for it is never a rounding error short of it.
///
/// Time is the injected `TimeSource`: waits for a token or a deadline are slept on it by one timer
/// task at a time, never `Task.sleep` or Dispatch timers, so tests drive the pacer by advancing a
/// manual clock. Thread-safe; share one instance for every call to one upstream.
public final class UpstreamPacer: Sendable {
    /// What `/health` shows of the pacer.
    public struct Figures: Sendable, Equatable {
        /// Calls per second that may start, on average.
        public var ratePerSecond: Double
        /// Calls that may start at once after a quiet spell.
        public var burst: Int
        /// The most calls in flight at once.
        public var concurrency: Int
        /// Calls in flight now.
        public var inFlight: Int
        /// Calls queued for a token or a slot now.
        public var waiting: Int
    }

    /// One queued call.
    private struct Waiter {
        let id: UInt64
        /// Seconds since 1970; at or past it the call leaves with `.timeout`.
        let deadline: Double
        let continuation: CheckedContinuation<Result<Void, UpstreamError>, Never>
    }

    /// The one task sleeping on the clock for the queue's next time-driven event.
    private struct Timer {
        let id: UInt64
        /// When it wakes, seconds since 1970.
        let wake: Double
        let task: Task<Void, Never>
    }

    private struct State {
        /// GCRA's theoretical arrival time: a call conforms at `now` when
        /// `now >= tat - (burst - 1) / ratePerSecond`. 0 means a full bucket.
        var tat = 0.0
        var inFlight = 0
        /// FIFO; the head is the only call that may start next.
        var queue: [Waiter] = []
        var timer: Timer?
        var nextID: UInt64 = 0
        /// Calls that had to queue, since start-up.
        var waits = 0
    }

    /// Work decided under the lock and done after it: resuming waiters, stopping a stale timer.
    private struct Effects {
        var resumptions: [(CheckedContinuation<Result<Void, UpstreamError>, Never>, Result<Void, UpstreamError>)] = []
        var cancelledTimer: Task<Void, Never>?

        func perform() {
            cancelledTimer?.cancel()
            for (continuation, result) in resumptions { continuation.resume(returning: result) }
        }
    }

    /// Calls per second that may start, on average.
    public let ratePerSecond: Double
    /// Calls that may start at once after a quiet spell (the bucket's size).
    public let burst: Int
    /// The most calls in flight at once.
    public let concurrency: Int
    private let time: any TimeSource
    private let state = Locked(State())

    /// - Parameters:
    ///   - ratePerSecond: average calls started per second; must be positive.
    ///   - burst: tokens the bucket holds, at least 1.
    ///   - concurrency: calls in flight at once, at least 1.
    ///   - time: the clock that tokens refill on and waits sleep on.
    public init(ratePerSecond: Double, burst: Int, concurrency: Int, time: any TimeSource) {
        precondition(ratePerSecond > 0 && ratePerSecond.isFinite, "the pacer needs a positive rate")
        precondition(burst >= 1 && concurrency >= 1, "the pacer needs a burst and a concurrency of at least 1")
        self.ratePerSecond = ratePerSecond
        self.burst = burst
        self.concurrency = concurrency
        self.time = time
    }

    /// Waits for its turn, a token and a slot, then runs `body` in the calling task and frees the
    /// slot when `body` returns or throws.
    ///
    /// - Parameter deadline: seconds since 1970. If it passes while the call waits (or has already
    ///   passed), the call leaves the queue and throws `.timeout`; `body` itself is not bounded.
    /// - Throws: `.timeout` as above; `.cancelled` if the task is cancelled while waiting (the call
    ///   leaves the queue and spends no token); any error passed to `failWaiting(with:)` while it
    ///   waits; or whatever `body` throws.
    public func run<T: Sendable>(
        deadline: Double, _ body: @Sendable () async throws(UpstreamError) -> T
    ) async throws(UpstreamError) -> T {
        try await admit(deadline: deadline)
        defer { release() }
        return try await body()
    }

    /// Sends every queued call away with `error` at once (calls in flight are not touched). Used
    /// when the firewall blocks this server: queued calls must not go out once a block began.
    public func failWaiting(with error: UpstreamError) {
        let effects = state.withLock { state -> Effects in
            var effects = Effects()
            effects.resumptions = state.queue.map { ($0.continuation, .failure(error)) }
            state.queue = []
            effects.cancelledTimer = state.timer?.task
            state.timer = nil
            return effects
        }
        effects.perform()
    }

    /// The figures now.
    /// Calls that had to queue for a token or a slot since start-up (for `/metrics`).
    public var waits: Int { state.withLock { $0.waits } }

    public var figures: Figures {
        state.withLock { state in
            Figures(
                ratePerSecond: ratePerSecond, burst: burst, concurrency: concurrency, inFlight: state.inFlight,
                waiting: state.queue.count)
        }
    }

    /// Returns once this call holds a token and a slot.
    private func admit(deadline: Double) async throws(UpstreamError) {
        if Task.isCancelled { throw .cancelled }
        let now = time.now()
        if deadline <= now { throw .timeout }
        let ticket = state.withLock { state -> UInt64? in
            if state.queue.isEmpty, state.inFlight < concurrency, conforms(state, at: now) {
                start(&state, at: now)
                return nil
            }
            state.nextID += 1
            state.waits += 1
            return state.nextID
        }
        guard let ticket else { return }

        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Result<Void, UpstreamError>, Never>) in
                let now = time.now()
                let effects = state.withLock { state -> Effects in
                    if Task.isCancelled {
                        var effects = Effects()
                        effects.resumptions = [(continuation, .failure(.cancelled))]
                        return effects
                    }
                    state.queue.append(Waiter(id: ticket, deadline: deadline, continuation: continuation))
                    return pump(&state, at: now)
                }
                effects.perform()
            }
        } onCancel: {
            let now = time.now()
            let effects = state.withLock { state -> Effects in
                guard let index = state.queue.firstIndex(where: { $0.id == ticket }) else { return Effects() }
                let waiter = state.queue.remove(at: index)
                var effects = pump(&state, at: now)  // the next in line may start now
                effects.resumptions.append((waiter.continuation, .failure(.cancelled)))
                return effects
            }
            effects.perform()
        }
        try result.get()
    }

    /// Frees the slot of a call whose body has ended, and lets the next in line start.
    private func release() {
        let now = time.now()
        let effects = state.withLock { state -> Effects in
            state.inFlight -= 1
            return pump(&state, at: now)
        }
        effects.perform()
    }

    /// Called by the timer task when the clock reached `wake`.
    private func timerFired(_ id: UInt64) {
        let now = time.now()
        let effects = state.withLock { state -> Effects in
            if state.timer?.id == id { state.timer = nil }
            return pump(&state, at: now)
        }
        effects.perform()
    }

    /// Whether a call starting at `now` stays within the rate.
    private func conforms(_ state: State, at now: Double) -> Bool {
        now >= nextStart(state)
    }

    /// The earliest moment the bucket holds a token, seconds since 1970.
    private func nextStart(_ state: State) -> Double {
        state.tat - Double(burst - 1) / ratePerSecond
    }

    /// Spends a token and takes a slot.
    private func start(_ state: inout State, at now: Double) {
        state.tat = max(state.tat, now) + 1 / ratePerSecond
        state.inFlight += 1
    }

    /// Under the lock: sends away calls whose deadline has come, starts whoever may start, and
    /// makes sure the timer wakes for the next time-driven event (a token for the head, the
    /// earliest deadline), or stops it when none is pending.
    private func pump(_ state: inout State, at now: Double) -> Effects {
        var effects = Effects()
        state.queue.removeAll { waiter in
            guard waiter.deadline <= now else { return false }
            effects.resumptions.append((waiter.continuation, .failure(.timeout)))
            return true
        }
        while let head = state.queue.first, state.inFlight < concurrency, conforms(state, at: now) {
            state.queue.removeFirst()
            start(&state, at: now)
            effects.resumptions.append((head.continuation, .success(())))
        }

        var wake = state.queue.lazy.map(\.deadline).min()
        if !state.queue.isEmpty, state.inFlight < concurrency {
            let tokenDue = nextStart(state)
            wake = min(wake ?? tokenDue, tokenDue)
        }
        guard let wake else {
            effects.cancelledTimer = state.timer?.task
            state.timer = nil
            return effects
        }
        // A timer due no later than `wake` is kept: when it fires, this runs again and re-arms.
        if let timer = state.timer, timer.wake <= wake { return effects }
        effects.cancelledTimer = state.timer?.task
        state.nextID += 1
        let id = state.nextID
        // Unstructured on purpose: the wake-up belongs to the whole queue, not to any one caller.
        // It ends when it fires or is cancelled (re-armed earlier, or nothing left to wait for).
        let task = Task { [time] in
            do {
                try await time.sleep(until: wake)
            } catch {
                return
            }
            self.timerFired(id)
        }
        state.timer = Timer(id: id, wake: wake, task: task)
        return effects
    }
}
