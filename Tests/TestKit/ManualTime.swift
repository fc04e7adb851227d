import MetEngine

/// A clock that moves only when a test moves it: freshness, `Age`, block cool-downs, pacing and
/// back-off are tested by advancing it, never by sleeping. Tasks that `sleep(until:)` are resumed
/// by `advance(by:)` once their deadline has passed.
public final class ManualTime: TimeSource {
    private struct Sleeper {
        let id: UInt64
        let deadline: Double
        let continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var now: Double
        var sleepers: [Sleeper] = []
        var nextID: UInt64 = 0
    }

    private let state: Locked<State>

    /// - Parameter start: seconds since 1970; the default is an arbitrary fixed instant (2025-06-15).
    public init(_ start: Double = 1_750_000_000) {
        state = Locked(State(now: start))
    }

    public func now() -> Double {
        state.withLock { $0.now }
    }

    /// Moves the clock forward by `interval` seconds and wakes every sleeper now due.
    public func advance(by interval: Double) {
        let due = state.withLock { state -> [Sleeper] in
            state.now += interval
            let due = state.sleepers.filter { $0.deadline <= state.now }
            state.sleepers.removeAll { $0.deadline <= state.now }
            return due
        }
        for sleeper in due { sleeper.continuation.resume() }
    }

    /// Moves the clock forward to `instant` (seconds since 1970; never backwards) and wakes every
    /// sleeper now due. `advance(to: nextDeadline!)` wakes exactly the earliest sleeper(s).
    public func advance(to instant: Double) {
        let due = state.withLock { state -> [Sleeper] in
            state.now = max(state.now, instant)
            let due = state.sleepers.filter { $0.deadline <= state.now }
            state.sleepers.removeAll { $0.deadline <= state.now }
            return due
        }
        for sleeper in due { sleeper.continuation.resume() }
    }

    /// How many tasks are sleeping on this clock right now.
    public var sleeping: Int { state.withLock { $0.sleepers.count } }

    /// The earliest deadline anyone sleeps until, if any.
    public var nextDeadline: Double? { state.withLock { $0.sleepers.map(\.deadline).min() } }

    public func sleep(until deadline: Double) async throws {
        let id = state.withLock { state -> UInt64 in
            state.nextID += 1
            return state.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                state.withLock { state in
                    if Task.isCancelled {
                        continuation.resume(throwing: CancellationError())
                    } else if deadline <= state.now {
                        continuation.resume()
                    } else {
                        state.sleepers.append(Sleeper(id: id, deadline: deadline, continuation: continuation))
                    }
                }
            }
        } onCancel: {
            let sleeper = state.withLock { state -> Sleeper? in
                guard let index = state.sleepers.firstIndex(where: { $0.id == id }) else { return nil }
                return state.sleepers.remove(at: index)
            }
            sleeper?.continuation.resume(throwing: CancellationError())
        }
    }
}
