/// Wakes tasks when the clock reaches their deadlines, with one sleeping task for all of them.
///
/// A `Task.sleep` per upstream call would be simpler, but a cancelled sleep keeps its timer
/// (a few hundred bytes) until the deadline it was given: at a few thousand answered calls a
/// second and a 30 s timeout, that is tens of megabytes held for nothing. Here a wait that ends
/// early leaves nothing behind. Thread-safe; the clock is the injected one, so tests drive it.
package final class DeadlineTimer: Sendable {
    private struct Waiter {
        package let deadline: Double
        package let continuation: CheckedContinuation<Bool, Never>
    }

    private struct State {
        package var waiters: [UInt64: Waiter] = [:]
        package var nextID: UInt64 = 0
        /// When the sleeping task wakes, if one sleeps; and which one it is.
        package var sleepingUntil: Double?
        package var sleeper: Task<Void, Never>?
        package var generation: UInt64 = 0
    }

    private let state = Locked(State())
    private let time: any TimeSource

    package init(time: any TimeSource) {
        self.time = time
    }

    /// Suspends until the clock reaches `deadline` (seconds since 1970). Returns true then, or
    /// false as soon as the calling task is cancelled.
    package func wait(until deadline: Double) async -> Bool {
        if time.now() >= deadline { return true }
        let id = state.withLock { state -> UInt64 in
            state.nextID += 1
            return state.nextID
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let cancelled = state.withLock { state -> Bool in
                    if Task.isCancelled { return true }
                    state.waiters[id] = Waiter(deadline: deadline, continuation: continuation)
                    if state.sleepingUntil.map({ deadline < $0 }) ?? true { startSleeper(&state, until: deadline) }
                    return false
                }
                if cancelled { continuation.resume(returning: false) }
            }
        } onCancel: {
            let waiter = state.withLock { state -> Waiter? in
                let waiter = state.waiters.removeValue(forKey: id)
                if state.waiters.isEmpty { stopSleeper(&state) }
                return waiter
            }
            waiter?.continuation.resume(returning: false)
        }
    }

    /// Nobody waits: no task sleeps either. Called under the lock.
    private func stopSleeper(_ state: inout State) {
        state.sleeper?.cancel()
        state.sleeper = nil
        state.sleepingUntil = nil
        state.generation += 1
    }

    /// Replaces the sleeping task with one that wakes at `deadline`. Called under the lock.
    private func startSleeper(_ state: inout State, until deadline: Double) {
        state.sleeper?.cancel()
        state.generation += 1
        let generation = state.generation
        state.sleepingUntil = deadline
        state.sleeper = Task { [time] in
            do {
                try await time.sleep(until: deadline)
            } catch {
                return  // replaced by a sleeper with an earlier deadline
            }
            self.wake(generation)
        }
    }

    /// Resumes every waiter whose deadline has passed and sleeps until the next one.
    private func wake(_ generation: UInt64) {
        let now = time.now()
        let due = state.withLock { state -> [CheckedContinuation<Bool, Never>] in
            var due: [CheckedContinuation<Bool, Never>] = []
            for (id, waiter) in state.waiters where waiter.deadline <= now {
                due.append(waiter.continuation)
                state.waiters[id] = nil
            }
            if state.generation == generation {
                state.sleeper = nil
                state.sleepingUntil = nil
                if let next = state.waiters.values.lazy.map(\.deadline).min() { startSleeper(&state, until: next) }
            }
            return due
        }
        for continuation in due { continuation.resume(returning: true) }
    }
}
