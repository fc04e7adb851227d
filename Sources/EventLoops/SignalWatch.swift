import CLibevent
import Dispatch

/// Signals caught as events on a loop of their own (libevent's `evsignal`: a handler that writes
/// to a socket pair the loop reads), then handed to a serial background queue.
///
/// Why not `DispatchSource.makeSignalSource`: it needs the default action replaced first
/// (`SIG_IGN`), and on Linux it starts watching only when its manager thread gets round to it,
/// after `resume()` has returned. A SIGTERM sent in between, by whoever read the address a server
/// had just announced, was dropped as ignored, and the server ran on. Here `observe` returns once
/// libevent's handler is installed: a signal sent after it is never lost, nor takes its default
/// action.
public enum SignalWatch {
    /// Replaces `number`'s default action, for the rest of the process, by `handler`, run on one
    /// serial queue (off every loop and the cooperative pool) for each delivery; signals that
    /// arrive together may be delivered once. Returns once the signal is caught. Any thread.
    public static func observe(_ number: Int32, _ handler: @escaping @Sendable () -> Void) throws(EventLoopError) {
        let loop = try shared.get()
        let delivery = Delivery(handler)
        let added = DispatchSemaphore(value: 0)
        let outcome = Outcome()
        let posted = loop.execute {
            // Kept for the life of the process, as the event that points at it.
            let context = Unmanaged.passRetained(delivery).toOpaque()
            let event = event_new(
                loop.base, number, Int16(EV_SIGNAL | EV_PERSIST),
                { _, _, context in Unmanaged<Delivery>.fromOpaque(context!).takeUnretainedValue().deliver() },
                context)
            outcome.failure = event == nil ? "evsignal_new" : event_add(event, nil) != 0 ? "evsignal_add" : nil
            added.signal()
        }
        guard posted else { throw EventLoopError("the signal loop has stopped") }
        added.wait()
        if let failure = outcome.failure { throw EventLoopError(failure) }
    }

    /// The one loop that holds the process's signal events (libevent lets one base at a time have
    /// them); started at first use, never stopped.
    private static let shared: Result<EventLoop, EventLoopError> = Result { () throws(EventLoopError) in
        let loop = try EventLoop(name: "signals")
        loop.start()
        return loop
    }

    /// Where handlers run, in the order signals arrived.
    private static let queue = DispatchQueue(label: "signals")

    /// One observed signal's handler, reached from its event's callback.
    private final class Delivery: Sendable {
        let handler: @Sendable () -> Void

        init(_ handler: @escaping @Sendable () -> Void) { self.handler = handler }

        /// Loop thread: hands the signal on, so a handler that blocks (a server draining) never
        /// holds up the next delivery's event.
        func deliver() { SignalWatch.queue.async(execute: handler) }
    }

    /// What the loop's job found, read by the caller after the semaphore: the semaphore orders the
    /// write before the read.
    private final class Outcome: @unchecked Sendable {
        var failure: String?
    }
}
