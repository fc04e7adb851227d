import Foundation

/// Closures posted from any thread to run on a loop's own thread, in order. `post` queues a job and
/// says when the loop must be woken; `drain` runs everything queued, on the loop's thread. Only the
/// first job after a drain asks for a wake-up. Once `close()` has run, jobs are dropped: the loop
/// that would run them is ending.
///
/// Behind an `NSLock` (a pthread mutex), not `Synchronization.Mutex`: ThreadSanitizer sees the
/// one and not the other, a raw futex, and would report every post as a race.
final class JobQueue: @unchecked Sendable {
    private struct State {
        var jobs: [@Sendable () -> Void] = []
        var closed = false
    }

    private let lock = NSLock()
    /// Under `lock`.
    private var state = State()

    /// Runs `body` with the state, under the lock.
    private func withLock<T>(_ body: (inout State) -> T) -> T {
        lock.lock()
        defer { lock.unlock() }
        return body(&state)
    }

    /// Queues `job`; false (and `job` dropped) once the queue is closed. Any thread.
    ///
    /// - Parameter wake: called, under the queue's lock, when `job` is the first since the last
    ///   drain: it must make the loop call `drain()` soon (libevent's `event_active`). Under the
    ///   lock, so that `close()` cannot free the wake-up event between the check and the call.
    @discardableResult
    func post(_ job: @escaping @Sendable () -> Void, wake: () -> Void) -> Bool {
        withLock { state in
            guard !state.closed else { return false }
            state.jobs.append(job)
            if state.jobs.count == 1 { wake() }
            return true
        }
    }

    /// Runs the jobs queued so far, in order. The loop's thread only.
    func drain() {
        let batch = withLock { state in
            let taken = state.jobs
            state.jobs.removeAll(keepingCapacity: true)
            return taken
        }
        for job in batch { job() }
    }

    /// Drops the jobs still queued and every later one. The loop's thread only.
    func close() {
        withLock { state in
            state.closed = true
            state.jobs = []
        }
    }
}
