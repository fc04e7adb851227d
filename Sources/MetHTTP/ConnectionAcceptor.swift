import CLibevent
import EventLoops
import Foundation
import MetEngine

/// Accepting on one loop's listening socket under the server-wide connection cap, and shedding
/// idle and slow connections when the cap keeps a client waiting.
///
/// Loop thread only, except `resume()`, which any thread may call. The acceptor owns the listening
/// socket until `stop()` closes it.
final class ConnectionAcceptor: @unchecked Sendable {
    private let loop: EventLoop
    private let listeningDescriptor: CInt
    private var acceptEvent: OpaquePointer?
    /// The cap on open connections, shared with the other loops.
    let budget: ConnectionBudget
    private let logger: Logger
    /// Accepting stopped because the budget is spent (not because of a shortage of descriptors).
    private var paused = false
    /// A descriptor or memory shortage was logged and no accept has succeeded since.
    private var shortageLogged = false
    /// Serves an accepted descriptor (connected, non-blocking, its budget slot taken).
    private let serve: (CInt) -> Void
    /// Closes the connections that may be shed now and says how many it closed.
    private let shed: () -> Int

    /// Starts watching `listeningDescriptor` (before the loop runs, or on its thread).
    init(
        loop: EventLoop, listeningDescriptor: CInt, budget: ConnectionBudget, logger: Logger,
        serve: @escaping (CInt) -> Void, shed: @escaping () -> Int
    ) throws {
        self.loop = loop
        self.listeningDescriptor = listeningDescriptor
        self.budget = budget
        self.logger = logger
        self.serve = serve
        self.shed = shed
        acceptEvent = event_new(
            loop.base, listeningDescriptor, Int16(EV_READ | EV_PERSIST),
            { _, _, context in
                Unmanaged<ConnectionAcceptor>.fromOpaque(context!).takeUnretainedValue().acceptConnections()
            },
            Unmanaged.passUnretained(self).toOpaque())
        guard acceptEvent != nil, event_add(acceptEvent, nil) == 0 else {
            if let acceptEvent { event_free(acceptEvent) }
            throw HTTPServerError("event_new")
        }
    }

    private func acceptConnections() {
        // A bounded batch, so a burst of new connections cannot starve the open ones.
        for iteration in 0..<16 {
            guard budget.acquire(for: self) else {
                // The event fired, so on the first pass a client waits; later passes must look.
                guard iteration == 0 || hasPendingConnection() else { return }
                let firstInEpisode = budget.clientWaits()
                paused = true
                event_del(acceptEvent)
                let closed = shed()
                if closed == 0 { recheckAtCap() }
                if firstInEpisode {
                    logger.warning(
                        "\(budget.limit) connections open (--max-connections); not accepting until some close "
                            + "(closed \(closed) idle or slow to send a request)")
                }
                return
            }
            let descriptor = accept4(
                listeningDescriptor, nil, nil, Int32(SOCK_NONBLOCK.rawValue | SOCK_CLOEXEC.rawValue))
            guard descriptor >= 0 else {
                let reason = errno
                budget.release()
                switch reason {
                case EINTR, ECONNABORTED: continue
                case EMFILE, ENFILE, ENOBUFS, ENOMEM: pauseAccepting(reason: reason)
                default: break
                }
                return
            }
            shortageLogged = false
            serve(descriptor)
        }
    }

    /// Serves `descriptor` as if it had just been accepted: the entry point for tests that drive a
    /// connection over one end of a `socketpair`. The descriptor must be a connected, non-blocking
    /// stream socket; it is owned from now on (closed at once when the cap leaves no slot).
    func adopt(descriptor: CInt) {
        guard budget.acquire(for: self) else {
            Glibc.close(descriptor)
            return
        }
        serve(descriptor)
    }

    /// While accepting is paused at the cap, looks again every half second for connections that
    /// have become idle or slow, until one is shed or accepting resumes.
    private func recheckAtCap() {
        // Weakly, as every timer here: one still pending when the loop stops must not keep its base.
        loop.schedule(after: 0.5) { [weak self] in
            guard let self, paused, acceptEvent != nil else { return }
            if shed() == 0 { recheckAtCap() }
        }
    }

    /// Whether a connection waits on the listening socket, without taking it.
    private func hasPendingConnection() -> Bool {
        var listener = pollfd(fd: listeningDescriptor, events: Int16(POLLIN), revents: 0)
        return poll(&listener, 1, 0) > 0
    }

    /// A connection closed somewhere and the budget has room again: accept anew. Any thread.
    func resume() {
        loop.execute { [self] in
            guard paused, let acceptEvent else { return }
            paused = false
            event_add(acceptEvent, nil)  // Level-triggered: connections already waiting fire it at once.
        }
    }

    /// Out of descriptors or memory: stop accepting for 100 ms rather than spin on the listener.
    /// Logged once until an accept succeeds again.
    private func pauseAccepting(reason: CInt) {
        if !shortageLogged {
            shortageLogged = true
            logger.warning("accept failed (\(String(cString: strerror(reason)))); retrying every 100 ms")
        }
        event_del(acceptEvent)
        loop.schedule(after: 0.1) { [weak self] in
            if let acceptEvent = self?.acceptEvent { event_add(acceptEvent, nil) }
        }
    }

    /// Stops accepting for good and closes the listening socket; idempotent.
    func stop() {
        guard let acceptEvent else { return }
        event_free(acceptEvent)
        self.acceptEvent = nil
        Glibc.close(listeningDescriptor)
    }
}
