/// Makes identical concurrent operations share one execution: the first caller for a key starts
/// it, later callers for the same key wait for the same result, and every waiter is resumed the
/// moment it arrives. A waiter whose task is cancelled leaves at once; the operation itself is
/// cancelled only when its last waiter has left.
public final class SingleFlight<Value: Sendable>: Sendable {
    private struct Flight {
        let id: UInt64
        var task: Task<Void, Never>?
        var waiters: [UInt64: CheckedContinuation<Result<Value, UpstreamError>, Never>] = [:]
    }

    private struct State {
        var flights: [String: Flight] = [:]
        var nextID: UInt64 = 0
    }

    private let state = Locked(State())

    public init() {}

    /// Runs `operation` for `key`, or joins the run already in progress for it.
    ///
    /// - Returns: the operation's result, and whether this call joined another's run (`true`) or
    ///   started its own (`false`). A cancelled waiter gets `.failure(.cancelled)`.
    public func run(
        _ key: String,
        operation: @escaping @Sendable () async -> Result<Value, UpstreamError>
    ) async -> (result: Result<Value, UpstreamError>, joined: Bool) {
        let waiter = state.withLock { state -> UInt64 in
            state.nextID += 1
            return state.nextID
        }
        let joined = Locked(false)
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Result<Value, UpstreamError>, Never>) in
                state.withLock { state in
                    if Task.isCancelled {
                        continuation.resume(returning: .failure(.cancelled))
                        return
                    }
                    if state.flights[key] != nil {
                        state.flights[key]!.waiters[waiter] = continuation
                        joined.withLock { $0 = true }
                        return
                    }
                    state.nextID += 1
                    let id = state.nextID
                    var flight = Flight(id: id)
                    flight.waiters[waiter] = continuation
                    // Unstructured on purpose: the operation belongs to all waiters, not to the first.
                    // Created under the lock so that a waiter leaving at once finds the task to cancel.
                    flight.task = Task {
                        let result = await operation()
                        self.finish(key, flight: id, with: result)
                    }
                    state.flights[key] = flight
                }
            }
        } onCancel: {
            leave(key, waiter: waiter)
        }
        return (result, joined.withLock { $0 })
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
        let (continuation, orphan) = state.withLock {
            state -> (CheckedContinuation<Result<Value, UpstreamError>, Never>?, Task<Void, Never>?) in
            guard var flight = state.flights[key], let continuation = flight.waiters.removeValue(forKey: waiter) else {
                return (nil, nil)
            }
            if flight.waiters.isEmpty {
                state.flights[key] = nil
                return (continuation, flight.task)
            }
            state.flights[key] = flight
            return (continuation, nil)
        }
        continuation?.resume(returning: .failure(.cancelled))
        orphan?.cancel()
    }
}
