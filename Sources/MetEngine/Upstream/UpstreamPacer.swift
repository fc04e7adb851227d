/// Paces every call to one upstream: a token bucket (`ratePerSecond`, holding up to `burst`
/// tokens) and an in-flight limit (`concurrency`), shared fairly between the clients whose
/// requests need the calls.
///
/// A call starts when it is chosen, fewer than `concurrency` calls are in flight, and a token is in
/// the bucket. It then takes the token and a slot, and gives the slot back when its body returns or
/// throws; the token is spent for good. So in any window of `w` seconds at most
/// `burst + ratePerSecond × w` calls start, and never more than `concurrency` run at once. The Met's
/// firewall blocks clients that hurry (docs/MET-API.md §6), and this is the one place that keeps
/// this server from hurrying.
///
/// Which waiting call is chosen: each call carries the claims of the requests that need it
/// (`UpstreamDemand`: a client and a class, foreground or background) and waits in one lane per
/// claim, a lane being one client's queue in one class, first come, first served. Foreground lanes
/// go before background ones; within a class the clients take turns, one call each, so one
/// client's hundred misses do not delay another's one (a call several clients need waits in each
/// of their lanes and starts in the first turn that comes). A client with `clientLimit` calls
/// waiting gets no further place: a call none of whose claims can be queued is refused with
/// `.clientQueueFull` and the seconds until its client would have room again; the server's own
/// claims (`UpstreamClaim.server`) are never refused.
///
/// The bucket is kept as a theoretical arrival time (GCRA): the moment the next token is due is one
/// stored number, so a wake-up scheduled for it is never a rounding error short of it.
///
/// Time is the injected `TimeSource`: waits for a token or a deadline are slept on it by one timer
/// task at a time, never `Task.sleep` or Dispatch timers, so tests drive the pacer by advancing a
/// manual clock. Thread-safe; share one instance for every call to one upstream.
public final class UpstreamPacer: Sendable {
    /// Calls per second that may start, on average.
    public let ratePerSecond: Double
    /// Calls that may start at once after a quiet spell (the bucket's size).
    public let burst: Int
    /// The most calls in flight at once.
    public let concurrency: Int
    /// The most calls one client may have waiting (`--client-queue`).
    public let clientLimit: Int
    private let time: any TimeSource
    private let state = Locked(State())

    /// - Parameters:
    ///   - ratePerSecond: average calls started per second; must be positive.
    ///   - burst: tokens the bucket holds, at least 1.
    ///   - concurrency: calls in flight at once, at least 1.
    ///   - clientLimit: calls one client may have waiting, at least 1; no limit by default.
    ///   - time: the clock that tokens refill on and waits sleep on.
    public init(
        ratePerSecond: Double, burst: Int, concurrency: Int, clientLimit: Int = .max, time: any TimeSource
    ) {
        precondition(ratePerSecond > 0 && ratePerSecond.isFinite, "the pacer needs a positive rate")
        precondition(burst >= 1 && concurrency >= 1, "the pacer needs a burst and a concurrency of at least 1")
        precondition(clientLimit >= 1, "a client may have at least one call waiting")
        self.ratePerSecond = ratePerSecond
        self.burst = burst
        self.concurrency = concurrency
        self.clientLimit = clientLimit
        self.time = time
    }

    /// Waits for its turn, a token and a slot, then runs `body` in the calling task and frees the
    /// slot when `body` returns or throws.
    ///
    /// - Parameters:
    ///   - deadline: seconds since 1970. If it passes while the call waits (or has already
    ///     passed), the call leaves the queue and throws `.timeout`; `body` itself is not bounded.
    ///   - demand: whose call it is; nil for the server's own work (one background lane, never
    ///     refused).
    ///   - mayRefuse: false for a call that must queue even past its clients' limits (a retry of a
    ///     fetch that was let through once).
    /// - Throws: `.timeout` as above; `.cancelled` if the task is cancelled while waiting (the call
    ///   leaves the queue and spends no token); `.clientQueueFull` when the call would have to
    ///   wait and every client of its demand has `clientLimit` calls waiting; any error passed to
    ///   `failWaiting(with:)` while it waits; or whatever `body` throws.
    public func run<T: Sendable>(
        deadline: Double, demand: UpstreamDemand? = nil, mayRefuse: Bool = true,
        _ body: @Sendable () async throws(UpstreamError) -> T
    ) async throws(UpstreamError) -> T {
        try await admit(deadline: deadline, demand: demand, mayRefuse: mayRefuse)
        defer { release() }
        return try await body()
    }

    /// Sends every queued call away with `error` at once (calls in flight are not touched). Used
    /// when the firewall blocks this server: queued calls must not go out once a block began.
    public func failWaiting(with error: UpstreamError) {
        let effects = state.withLock { state -> Effects in
            var effects = Effects()
            effects.resumptions = state.waiters.values.map { ($0.continuation, .failure(error)) }
            state.waiters = [:]
            state.queues = [:]
            state.placed = 0
            state.rotation = [[], []]
            state.turn = [0, 0]
            state.waitingByClient = [:]
            effects.cancelledTimer = state.timer?.task
            state.timer = nil
            return effects
        }
        effects.perform()
    }

    /// Calls that had to queue for a token or a slot since start-up (for `/metrics`).
    public var waits: Int { state.withLock { $0.waits } }

    /// Tickets held in the lanes, stale ones included, and clients in the turns (for tests: what
    /// `compact` bounds).
    package var laneFigures: (tickets: Int, clients: Int) {
        state.withLock { ($0.placed, $0.rotation.reduce(0) { $0 + $1.count }) }
    }

    /// The figures now.
    public var figures: Figures {
        state.withLock { state in
            Figures(
                ratePerSecond: ratePerSecond, burst: burst, concurrency: concurrency, inFlight: state.inFlight,
                waiting: state.waiters.count, waitingInForeground: state.waiters.values.count(where: \.isForeground),
                clientsWaiting: state.waitingByClient.keys.count { $0 != nil }, clientLimit: clientLimit,
                refused: state.refused)
        }
    }

    /// Returns once this call holds a token and a slot.
    private func admit(deadline: Double, demand: UpstreamDemand?, mayRefuse: Bool) async throws(UpstreamError) {
        if Task.isCancelled { throw .cancelled }
        let now = time.now()
        if deadline <= now { throw .timeout }
        let ticket = state.withLock { state -> UInt64? in
            if state.waiters.isEmpty, state.inFlight < concurrency, conforms(state, at: now) {
                start(&state, at: now)
                return nil
            }
            state.nextID += 1
            return state.nextID
        }
        guard let ticket else {
            demand?.placed()
            return
        }
        defer { demand?.stopObserving() }

        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Result<Void, UpstreamError>, Never>) in
                let now = time.now()
                var queued = false
                let effects = state.withLock { state -> Effects in
                    var effects = Effects()
                    if Task.isCancelled {
                        effects.resumptions = [(continuation, .failure(.cancelled))]
                        return effects
                    }
                    // Claims that join while the call waits give it a place in their lanes too. Asked
                    // under this lock, so that a claim added meanwhile waits for the call to be queued.
                    let claims =
                        demand?.observe { [weak self] claim in self?.join(ticket, claim) } ?? [UpstreamClaim.server]
                    var lanes = claims.compactMap { admissible($0, in: state) }
                    if lanes.isEmpty {
                        guard !mayRefuse else {
                            state.refused += 1
                            let wait = retryAfter(claims[0].client, in: state, at: now)
                            effects.resumptions = [(continuation, .failure(.clientQueueFull(retryAfter: wait)))]
                            return effects
                        }
                        lanes = [Lane(priority: claims[0].priority, client: claims[0].client)]
                    }
                    queued = true
                    return enqueue(
                        ticket, Waiter(deadline: deadline, continuation: continuation, lanes: lanes), into: &state,
                        at: now)
                }
                if queued { demand?.placed() }
                effects.perform()
            }
        } onCancel: {
            let now = time.now()
            let effects = state.withLock { state -> Effects in
                guard let waiter = remove(ticket, from: &state) else { return Effects() }
                var effects = pump(&state, at: now)  // the next in line may start now
                effects.resumptions.append((waiter.continuation, .failure(.cancelled)))
                return effects
            }
            effects.perform()
        }
        try result.get()
    }

    /// Seconds until `client` would have room for one more call (see the private `retryAfter`):
    /// the `Retry-After` of a request refused for its client's share.
    public func retryAfter(for client: String?) -> Double {
        let now = time.now()
        return state.withLock { retryAfter(client, in: $0, at: now) }
    }

    /// The lane `claim` gives a call, or nil when its client already has `clientLimit` calls
    /// waiting (the server's own claims are never turned away). Under the lock.
    private func admissible(_ claim: UpstreamClaim, in state: State) -> Lane? {
        if let client = claim.client, state.waitingByClient[client, default: 0] >= clientLimit { return nil }
        return Lane(priority: claim.priority, client: claim.client)
    }

    /// Puts the call waiting as `ticket` in its lanes and pumps. Under the lock.
    private func enqueue(_ ticket: UInt64, _ waiter: Waiter, into state: inout State, at now: Double) -> Effects {
        var waiter = waiter
        var unique: [Lane] = []
        for lane in waiter.lanes where !unique.contains(lane) { unique.append(lane) }
        waiter.lanes = unique
        state.waits += 1
        state.waiters[ticket] = waiter
        for client in waiter.clients { state.waitingByClient[client, default: 0] += 1 }
        for lane in unique { place(ticket, in: lane, &state) }
        return pump(&state, at: now)
    }

    /// Appends `ticket` to `lane`, which joins its class's turns when it was empty. Under the lock.
    private func place(_ ticket: UInt64, in lane: Lane, _ state: inout State) {
        let wasEmpty = state.queues[lane]?.isEmpty ?? true
        state.queues[lane, default: Queue()].tickets.append(ticket)
        state.placed += 1
        if wasEmpty, !state.rotation[lane.priority.rawValue].contains(lane.client) {
            // Last in the round: every client already waiting has its turn first.
            let priority = lane.priority.rawValue
            let position = state.turn[priority]
            state.rotation[priority].insert(lane.client, at: position)
            state.turn[priority] = position + 1
            if state.turn[priority] >= state.rotation[priority].count { state.turn[priority] = 0 }
        }
    }

    /// A claim that joined the call waiting as `ticket`: a place in the claim's lane, unless the
    /// call has one there already or its client has no room (it then only waits for the call).
    private func join(_ ticket: UInt64, _ claim: UpstreamClaim) {
        let now = time.now()
        let effects = state.withLock { state -> Effects in
            guard var waiter = state.waiters[ticket] else { return Effects() }
            let lane = Lane(priority: claim.priority, client: claim.client)
            guard !waiter.lanes.contains(lane) else { return Effects() }
            let counted = waiter.clients.contains(claim.client)
            if !counted, admissible(claim, in: state) == nil { return Effects() }
            waiter.lanes.append(lane)
            state.waiters[ticket] = waiter
            if !counted { state.waitingByClient[claim.client, default: 0] += 1 }
            place(ticket, in: lane, &state)
            return pump(&state, at: now)
        }
        effects.perform()
    }

    /// Takes the call waiting as `ticket` out (its lanes skip it from now on) and uncounts it.
    /// Under the lock.
    private func remove(_ ticket: UInt64, from state: inout State) -> Waiter? {
        guard let waiter = state.waiters.removeValue(forKey: ticket) else { return nil }
        for client in waiter.clients {
            let left = state.waitingByClient[client, default: 1] - 1
            state.waitingByClient[client] = left > 0 ? left : nil
        }
        return waiter
    }

    /// Seconds until `client` would have room for one more call, were its calls served at its
    /// share of the rate (one turn in every round of the clients waiting), plus the wait for the
    /// next token. At least one second. Under the lock.
    private func retryAfter(_ client: String?, in state: State, at now: Double) -> Double {
        let excess = state.waitingByClient[client, default: 0] - clientLimit + 1
        let clients = max(1, state.waitingByClient.keys.count { $0 != nil })
        let token = max(0, nextStart(state) - now)
        return max(1, (token + Double(max(1, excess) * clients) / ratePerSecond).rounded(.up))
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

    /// The call whose turn it is, taken out of its lanes' queues; nil when none waits. Foreground
    /// before background; within a class, the next client in turn, the oldest call of its lane.
    /// Under the lock.
    private func next(_ state: inout State) -> UInt64? {
        for priority in UpstreamClaim.Priority.allCases {
            let round = priority.rawValue
            while !state.rotation[round].isEmpty {
                if state.turn[round] >= state.rotation[round].count { state.turn[round] = 0 }
                let position = state.turn[round]
                let lane = Lane(priority: priority, client: state.rotation[round][position])
                var queue = state.queues[lane] ?? Queue()
                // Calls that started or left through another lane are skipped.
                while !queue.isEmpty, state.waiters[queue.tickets[queue.head]] == nil {
                    queue.removeFirst()
                    state.placed -= 1
                }
                guard !queue.isEmpty else {
                    state.queues[lane] = nil
                    state.rotation[round].remove(at: position)
                    continue
                }
                let ticket = queue.tickets[queue.head]
                queue.removeFirst()
                state.placed -= 1
                state.queues[lane] = queue
                state.turn[round] = position + 1
                return ticket
            }
        }
        return nil
    }

    /// Drops the tickets of calls that started or left through another lane, or timed out or were
    /// cancelled, from every queue, and the lanes and turns left empty: a lane is only cleaned
    /// when its turn comes, and a background lane's may not come while foreground calls wait.
    /// Under the lock; called when stale tickets outnumber the live ones.
    private func compact(_ state: inout State) {
        var placed = 0
        for (lane, queue) in state.queues {
            let live = queue.tickets[queue.head...].filter { state.waiters[$0] != nil }
            state.queues[lane] = live.isEmpty ? nil : Queue(tickets: live, head: 0)
            placed += live.count
        }
        state.placed = placed
        for priority in UpstreamClaim.Priority.allCases {
            let round = priority.rawValue
            let next =
                state.rotation[round].indices.contains(state.turn[round])
                ? state.rotation[round][state.turn[round]] : nil
            state.rotation[round].removeAll { state.queues[Lane(priority: priority, client: $0)] == nil }
            state.turn[round] = next.flatMap { client in state.rotation[round].firstIndex { $0 == client } } ?? 0
        }
    }

    /// Under the lock: sends away calls whose deadline has come, starts whoever may start, and
    /// makes sure the timer wakes for the next time-driven event (a token for the next call, the
    /// earliest deadline), or stops it when none is pending.
    private func pump(_ state: inout State, at now: Double) -> Effects {
        var effects = Effects()
        for (ticket, waiter) in state.waiters where waiter.deadline <= now {
            _ = remove(ticket, from: &state)
            effects.resumptions.append((waiter.continuation, .failure(.timeout)))
        }
        if state.placed > 2 * state.waiters.count + 256 { compact(&state) }
        while !state.waiters.isEmpty, state.inFlight < concurrency, conforms(state, at: now),
            let ticket = next(&state), let waiter = remove(ticket, from: &state)
        {
            start(&state, at: now)
            effects.resumptions.append((waiter.continuation, .success(())))
        }

        var wake = state.waiters.values.lazy.map(\.deadline).min()
        if !state.waiters.isEmpty, state.inFlight < concurrency {
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
