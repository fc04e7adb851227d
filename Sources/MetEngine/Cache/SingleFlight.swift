/// Makes identical concurrent operations share one execution: the first caller for a key starts
/// it, later callers for the same key wait for the same result, and every waiter is resumed the
/// moment it arrives. A waiter whose task is cancelled leaves at once; the operation itself is
/// never cancelled once started, even when every waiter has left: it runs to its end, so what it
/// fetches still fills the cache, and callers arriving meanwhile join it.
///
/// Each caller brings its claim (whose request it is, and whether it waits in the foreground); the
/// flight's `UpstreamDemand` gathers the first caller's and every joiner's, and the operation
/// receives it, so that the pacer queues the flight's fetch for each of them. A waiter that
/// leaves keeps its claim in the demand: the operation goes on, and the fetch it waits for is
/// still that client's.
public final class SingleFlight<Value: Sendable>: Sendable {
    private struct Flight {
        package let id: UInt64
        package let demand: UpstreamDemand
        package var waiters: [UInt64: CheckedContinuation<Result<Value, UpstreamError>, Never>] = [:]
    }

    private struct State {
        package var flights: [String: Flight] = [:]
        package var nextID: UInt64 = 0
        /// The waiters that joined a run already in progress, until they read it after their wait.
        package var joined = Set<UInt64>()
    }

    private let state = Locked(State())

    public init() {}

    /// Runs `operation` for `key` with a demand holding `claim`, or joins the run already in
    /// progress for it (adding `claim` to its demand).
    ///
    /// - Parameter onPlaced: told once the caller's fetch has its place: at once when it joins a
    ///   run, else when the run's demand says so (`UpstreamDemand.placed()`).
    /// - Returns: the operation's result, and whether this call joined another's run (`true`) or
    ///   started its own (`false`). A cancelled waiter gets `.failure(.cancelled)`.
    public func run(
        _ key: String, claim: UpstreamClaim, onPlaced: (@Sendable () -> Void)? = nil,
        operation: @escaping @Sendable (UpstreamDemand) async -> Result<Value, UpstreamError>
    ) async -> (result: Result<Value, UpstreamError>, joined: Bool) {
        let waiter = state.withLock { state -> UInt64 in
            state.nextID += 1
            return state.nextID
        }
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Result<Value, UpstreamError>, Never>) in
                let joined = state.withLock { state -> UpstreamDemand? in
                    if Task.isCancelled {
                        continuation.resume(returning: .failure(.cancelled))
                        return nil
                    }
                    if let flight = state.flights[key] {
                        state.flights[key]!.waiters[waiter] = continuation
                        state.joined.insert(waiter)
                        return flight.demand
                    }
                    state.nextID += 1
                    let id = state.nextID
                    let demand = UpstreamDemand(claim, onPlaced: onPlaced)
                    var flight = Flight(id: id, demand: demand)
                    flight.waiters[waiter] = continuation
                    // Unstructured on purpose: the operation belongs to all waiters, not to the first,
                    // and outlives them all.
                    Task {
                        let result = await operation(demand)
                        self.finish(key, flight: id, with: result)
                    }
                    state.flights[key] = flight
                    return nil
                }
                // Outside the lock: the pacer may take the joined claim's place in its own.
                if let joined {
                    joined.add(claim)
                    onPlaced?()
                }
            }
        } onCancel: {
            leave(key, waiter: waiter)
        }
        // Read under the lock `finish` takes after the operation ends: besides the answer, this
        // orders the operation's writes (the entry it made) before the caller's reads in a way
        // ThreadSanitizer sees. A continuation resumed before its task suspended synchronises
        // only through the concurrency runtime's own atomics, which TSan cannot see.
        let joined = state.withLock { $0.joined.remove(waiter) != nil }
        return (result, joined)
    }

    /// The number of keys with an operation in progress, for tests and `/health`.
    public var inFlight: Int { state.withLock { $0.flights.count } }

    /// The number of callers waiting for `key`'s operation (0 when none runs), for tests.
    public func waiterCount(for key: String) -> Int { state.withLock { $0.flights[key]?.waiters.count ?? 0 } }

    private func finish(_ key: String, flight id: UInt64, with result: Result<Value, UpstreamError>) {
        let waiters = state.withLock { state -> [CheckedContinuation<Result<Value, UpstreamError>, Never>] in
            guard let flight = state.flights[key], flight.id == id else { return [] }
            state.flights[key] = nil
            return Array(flight.waiters.values)
        }
        for waiter in waiters { waiter.resume(returning: result) }
    }

    private func leave(_ key: String, waiter: UInt64) {
        // The flight stays, without this waiter: later callers for the key still join it.
        let continuation = state.withLock { state in state.flights[key]?.waiters.removeValue(forKey: waiter) }
        continuation?.resume(returning: .failure(.cancelled))
    }
}
