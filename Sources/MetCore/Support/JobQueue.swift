/// Work posted from any thread to a loop that runs on a thread of its own (the upstream's curl
/// loop, the Redis loop): `post` queues a job and says when the loop must be woken, `drain` runs
/// everything queued, on the loop's thread. Only the first job after a drain asks for a wake-up.
public final class JobQueue: Sendable {
    private let jobs = Locked<[@Sendable () -> Void]>([])

    public init() {}

    /// Queues `job`. Any thread.
    ///
    /// - Parameter wake: called, under the queue's lock, when `job` is the first since the last
    ///   drain: it must make the loop call `drain()` soon (libevent's `event_active`).
    public func post(_ job: @escaping @Sendable () -> Void, wake: () -> Void) {
        jobs.withLock { queue in
            queue.append(job)
            if queue.count == 1 { wake() }
        }
    }

    /// Runs the jobs queued so far, in order. The loop's thread only.
    public func drain() {
        let batch = jobs.withLock { queue in
            defer { queue.removeAll(keepingCapacity: true) }
            return queue
        }
        for job in batch { job() }
    }
}
