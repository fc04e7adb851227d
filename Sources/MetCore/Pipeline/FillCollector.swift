/// Gathers the resolutions of the fetches a need started in the background, and lets the driver
/// wait for them until a deadline. The fetches outlive the request: what arrives after the
/// deadline still fills the cache for the next identical request.
final class FillCollector: Sendable {
    private struct State {
        var results: [Int: Resolution] = [:]
        var remaining: Int
        var waiter: CheckedContinuation<Void, Never>?
    }

    private let state: Locked<State>

    /// - Parameter expected: how many `deliver` calls will come.
    init(expected: Int) {
        state = Locked(State(remaining: expected))
    }

    /// Records the resolution of fetch `index`. Any thread.
    func deliver(_ index: Int, _ resolution: Resolution) {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            state.results[index] = resolution
            state.remaining -= 1
            guard state.remaining == 0 else { return nil }
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume()
    }

    /// The resolutions delivered so far, by fetch index.
    var results: [Int: Resolution] { state.withLock { $0.results } }

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
