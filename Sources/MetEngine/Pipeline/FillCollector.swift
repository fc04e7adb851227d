/// Gathers the resolutions of the fetches a need started in the background, and lets the driver
/// wait for them until a deadline. The fetches outlive the request: what arrives after the
/// deadline still fills the cache for the next identical request.
///
/// A fetch that has not arrived by the deadline is waited for a little longer until it has at
/// least its place with the upstream (`place`): queued, or refused. So a request that answers
/// before its fetches (a `wait` of 0) still learns which of them its client had no room for, and
/// what it lists as pending is what is really being fetched. That extra wait is bounded by
/// `placementBound` (the look at the tiers below memory comes first, and a slow Redis is slow).
package final class FillCollector: Sendable {
    private struct State {
        package var results: [Int: Resolution] = [:]
        /// Fetches that have their place with the upstream, or their resolution.
        package var placed = Set<Int>()
        package var remaining: Int
        package var expected: Int
        /// Who waits for what (one wait of each at most).
        package var waiters: [Condition: CheckedContinuation<Void, Never>] = [:]
    }

    /// Seconds past the deadline a fetch may take to get its place before the request answers
    /// without knowing: a look at the disk and at Redis (bounded by `--redis-timeout`) takes less.
    package static let placementBound = 1.0

    private let state: Locked<State>

    /// - Parameter expected: how many `deliver` calls will come.
    package init(expected: Int) {
        state = Locked(State(remaining: expected, expected: expected))
    }

    /// Records the resolution of fetch `index`. Any thread.
    package func deliver(_ index: Int, _ resolution: Resolution) {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.results[index] = resolution
            state.remaining -= 1
            state.placed.insert(index)
            return Self.due(&state)
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Records that fetch `index` has its place with the upstream (see the type's comment). Any
    /// thread.
    package func place(_ index: Int) {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.placed.insert(index)
            return Self.due(&state)
        }
        for waiter in waiters { waiter.resume() }
    }

    /// The resolutions delivered so far, by fetch index.
    package var results: [Int: Resolution] { state.withLock { $0.results } }

    /// Waits until every expected delivery has come, or `deadline` (seconds since 1970) has passed
    /// and every fetch has its place (at most `placementBound` longer), whichever is first. Returns
    /// early, without error, if the calling task is cancelled.
    package func wait(until deadline: Double, time: any TimeSource) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.until(.delivered) }
            group.addTask {
                do {
                    try await time.sleep(until: deadline)
                } catch {
                    return
                }
                await self.until(.placed)
            }
            group.addTask { try? await time.sleep(until: deadline + Self.placementBound) }
            await group.next()
            group.cancelAll()
        }
    }

    /// What a wait waits for.
    private enum Condition: Hashable {
        /// Every fetch delivered its resolution.
        case delivered
        /// Every fetch has its place, or its resolution.
        case placed
    }

    private static func holds(_ condition: Condition, in state: State) -> Bool {
        switch condition {
        case .delivered: state.remaining <= 0
        case .placed: state.placed.count >= state.expected
        }
    }

    /// The waiters whose condition holds now, taken out. Under the lock.
    private static func due(_ state: inout State) -> [CheckedContinuation<Void, Never>] {
        var due: [CheckedContinuation<Void, Never>] = []
        for condition in [Condition.delivered, .placed] where holds(condition, in: state) {
            if let waiter = state.waiters.removeValue(forKey: condition) { due.append(waiter) }
        }
        return due
    }

    /// Returns once `condition` holds, or the calling task is cancelled.
    private func until(_ condition: Condition) async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let done = state.withLock { state -> Bool in
                    if Task.isCancelled || Self.holds(condition, in: state) { return true }
                    state.waiters[condition] = continuation
                    return false
                }
                if done { continuation.resume() }
            }
        } onCancel: {
            state.withLock { $0.waiters.removeValue(forKey: condition) }?.resume()
        }
    }
}
