/// Gathers the objects a search is fetching in the background, and lets the search wait for
/// them until a deadline. The fetches outlive the search: what arrives after the deadline still
/// fills the cache for the next identical request.
final class HydrationCollector: Sendable {
    private struct State {
        var results: [Int: CacheEntry] = [:]
        var remaining: Int
        var waiter: CheckedContinuation<Void, Never>?
    }

    private let state: Locked<State>

    /// - Parameter expected: how many `deliver` calls will come.
    init(expected: Int) {
        state = Locked(State(remaining: expected))
    }

    /// Records the outcome for object `id` (nil when the fetch failed). Any thread.
    func deliver(_ id: Int, _ entry: CacheEntry?) {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            if let entry { state.results[id] = entry }
            state.remaining -= 1
            guard state.remaining == 0 else { return nil }
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume()
    }

    /// The entries delivered so far, by object ID.
    var results: [Int: CacheEntry] { state.withLock { $0.results } }

    /// Waits until every expected delivery has come or `deadline` (seconds since 1970) passes,
    /// whichever is first. Returns early, without error, if the calling task is cancelled.
    func wait(until deadline: Double, time: any TimeSource) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.allDelivered() }
            group.addTask { try? await time.sleep(until: deadline) }
            await group.next()
            group.cancelAll()
        }
    }

    private func allDelivered() async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let done = state.withLock { state -> Bool in
                    if state.remaining <= 0 || Task.isCancelled { return true }
                    state.waiter = continuation
                    return false
                }
                if done { continuation.resume() }
            }
        } onCancel: {
            let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
                defer { state.waiter = nil }
                return state.waiter
            }
            waiter?.resume()
        }
    }
}
