import Foundation

/// Bounds how many long blocking jobs run at once, and runs each on a thread of its own: never on
/// a loop thread, nor on Swift's cooperative pool, whose few threads the requests' tasks share.
/// The IIIF derivations go through one (each decodes a whole picture into memory, so this bounds
/// the memory they take too), and `GET /cache/snapshot` through another, one at a time. Callers
/// beyond the bound wait in arrival order. A waiter is not cancelled: a job runs to its end (a
/// derivation runs under single flight, whose operation always does). Thread-safe.
package final class BlockingGate: Sendable {
    private struct State {
        var running = 0
        var waiting: [CheckedContinuation<Void, Never>] = []
    }

    private let limit: Int
    private let state = Locked(State())

    /// - Parameter limit: jobs at once, at least 1.
    package init(limit: Int) {
        self.limit = max(1, limit)
    }

    /// Jobs running and waiting now, for `/health` and the tests.
    package var load: (running: Int, waiting: Int) { state.withLock { ($0.running, $0.waiting.count) } }

    /// Runs `work` on a thread of its own once fewer than `limit` others run, and returns its result.
    package func run<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let admitted = state.withLock { state -> Bool in
                guard state.running < limit else {
                    state.waiting.append(continuation)
                    return false
                }
                state.running += 1
                return true
            }
            if admitted { continuation.resume() }
        }
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<T, Never>) in
            Thread { continuation.resume(returning: work()) }.start()
        }
        // The place passes to the first waiter, if any; else it is freed.
        let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard !state.waiting.isEmpty else {
                state.running -= 1
                return nil
            }
            return state.waiting.removeFirst()
        }
        next?.resume()
        return result
    }
}
