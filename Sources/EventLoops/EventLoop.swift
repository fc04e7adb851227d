import CLibevent
import Foundation
import Synchronization

/// One libevent event base run on a named thread of its own: the one loop type under the HTTP
/// loops, the upstream's curl loop and the Redis link.
///
/// Threads: `execute(_:)` and `start()` may be called from any thread. Everything else, and every
/// libevent call on `base` by the owner (socket events, curl's and hiredis's), happens on the
/// loop's thread, with one exception: events may be added before `start()`, from the thread that
/// made the loop.
///
/// Lifetime: the thread holds the loop, and the owner given to `start(holding:)`, while it runs:
/// an owner whose callbacks reach it through unretained pointers (curl's and hiredis's, timers)
/// lives as long as its loop. `stop()` (loop thread) drops the jobs still queued, refuses later
/// ones and ends the thread once the current callback returns; the owner frees its own events
/// first. The base is freed when the last reference goes, after the thread has ended, so a
/// `LoopTimer` (which holds its loop) never outlives the base it is on. A loop that is never
/// stopped runs, with its owner, for the life of the process.
public final class EventLoop: @unchecked Sendable {
    /// The event base, for the owner's own events.
    public let base: OpaquePointer
    /// The thread's name (`ps -L`, debuggers, TSan reports).
    public let name: String
    private let jobs = JobQueue()
    private var wakeEvent: OpaquePointer?
    private let ended = DispatchSemaphore(value: 0)
    /// The loop thread's `pthread_self()`, once it runs; 0 before.
    private let thread = Atomic<UInt>(0)

    /// Makes the base; the thread starts with `start()`.
    ///
    /// - Parameter coalescesChanges: gathers the epoll changes made while handling one batch of
    ///   events into one call each (`EVENT_BASE_FLAG_EPOLL_USE_CHANGELIST`): worth it for a loop
    ///   that re-arms many sockets per batch (HTTP), not for one socket or two.
    public init(name: String, coalescesChanges: Bool = false) throws(EventLoopError) {
        _ = Self.processPrepared
        guard let config = event_config_new() else { throw EventLoopError("event_config_new") }
        defer { event_config_free(config) }
        if coalescesChanges { event_config_set_flag(config, Int32(EVENT_BASE_FLAG_EPOLL_USE_CHANGELIST.rawValue)) }
        guard let base = event_base_new_with_config(config) else { throw EventLoopError("event_base_new") }
        self.base = base
        self.name = name
        wakeEvent = event_new(
            base, -1, 0,
            { _, _, context in Unmanaged<EventLoop>.fromOpaque(context!).takeUnretainedValue().jobs.drain() },
            Unmanaged.passUnretained(self).toOpaque())
        // Every property is set: `deinit` frees the base.
        guard wakeEvent != nil else { throw EventLoopError("event_new") }
    }

    deinit {
        if let wakeEvent { event_free(wakeEvent) }
        event_base_free(base)
    }

    /// Starts the loop's thread, which holds `owner` until the loop stops. Once; any thread.
    public func start(holding owner: (AnyObject & Sendable)? = nil) {
        let thread = Thread { [self] in
            self.thread.store(UInt(pthread_self()), ordering: .relaxed)
            withExtendedLifetime(owner) { _ = event_base_loop(base, EVLOOP_NO_EXIT_ON_EMPTY) }
            ended.signal()
        }
        thread.name = name
        thread.start()
    }

    /// Whether the calling thread is this loop's (false before it starts). Any thread.
    public var isCurrent: Bool { thread.load(ordering: .relaxed) == UInt(pthread_self()) }

    /// Runs `job` on the loop's thread, after the jobs posted before it. Any thread; only the first
    /// job after a drain pays for the wake-up. Returns false, dropping `job`, once `stop()` ran.
    @discardableResult
    public func execute(_ job: @escaping @Sendable () -> Void) -> Bool {
        jobs.post(job) { event_active(wakeEvent, 0, 0) }
    }

    /// Runs `job` on the loop's thread in `seconds` (at once if the timer cannot be made, out of
    /// memory). Loop thread. For a timer re-armed often, `LoopTimer` saves the allocation.
    public func schedule(after seconds: Double, _ job: @escaping () -> Void) {
        let box = Unmanaged.passRetained(JobBox(job)).toOpaque()
        var delay = Self.interval(seconds: max(0, seconds))
        let added = event_base_once(
            base, -1, Int16(EV_TIMEOUT), { _, _, box in Unmanaged<JobBox>.fromOpaque(box!).takeRetainedValue().job() },
            box, &delay)
        if added != 0 { Unmanaged<JobBox>.fromOpaque(box).takeRetainedValue().job() }
    }

    private final class JobBox {
        let job: () -> Void
        init(_ job: @escaping () -> Void) { self.job = job }
    }

    /// Seconds since 1970 as of this loop iteration, with no system call. Loop thread.
    public var cachedNow: Double {
        var now = timeval()
        event_base_gettimeofday_cached(base, &now)
        return Double(now.tv_sec) + Double(now.tv_usec) / 1_000_000
    }

    /// Whole seconds since 1970 as of this loop iteration. Loop thread.
    public var cachedSecond: Int {
        var now = timeval()
        event_base_gettimeofday_cached(base, &now)
        return now.tv_sec
    }

    /// Ends the loop once the current callback returns; jobs still queued and posted later are
    /// dropped. Loop thread; the owner has freed its own events.
    public func stop() {
        jobs.close()
        event_base_loopbreak(base)
    }

    /// Blocks until the loop's thread has ended (after `stop()`). Not on the loop's thread.
    public func waitUntilStopped() {
        ended.wait()
    }

    /// `seconds` as a `timeval`, for `event_add`.
    public static func interval(seconds: Double) -> timeval {
        let whole = seconds.rounded(.down)
        return timeval(tv_sec: Int(whole), tv_usec: Int(((seconds - whole) * 1_000_000).rounded(.down)))
    }

    /// Process-wide, once, before the first base: libevent's thread support (so that `event_active`
    /// from another thread wakes a loop), and no SIGPIPE (a write to a socket the peer closed
    /// fails with EPIPE instead of killing the process).
    private static let processPrepared: Bool = {
        signal(SIGPIPE, SIG_IGN)
        return evthread_use_pthreads() == 0
    }()
}

/// A failure to make a loop; the text names the libevent call that failed.
public struct EventLoopError: Error, CustomStringConvertible, Sendable {
    public let description: String

    init(_ description: String) { self.description = description }
}
