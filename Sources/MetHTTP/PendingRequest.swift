import CLibevent
import Foundation

/// Loop-thread state of one request that went async: its libevent request, the task computing
/// the answer, and a watch on the client's socket. Touched only on its loop's thread.
final class PendingRequest {
    /// The evhttp request; answered exactly once, then forgotten.
    let request: LoopPointer
    /// The Swift task computing the response; cancelled if the client hangs up.
    var task: Task<Void, Never>?
    /// Whether the client closed its connection before the answer was ready.
    var clientGone = false
    /// Our one-shot read event on the client's socket, or nil once freed.
    private var watch: OpaquePointer?

    init(request: LoopPointer) {
        self.request = request
    }

    /// Starts watching the client's socket for EOF. libevent 2.1 stops reading a connection while
    /// a request on it is pending, so it never reports a hang-up until we reply; this event does.
    /// Retains `self` until `stopWatching()`.
    func watchForHangUp(base: OpaquePointer) {
        guard let connection = evhttp_request_get_connection(request.raw),
            let bufferEvent = evhttp_connection_get_bufferevent(connection)
        else { return }
        let fd = bufferevent_getfd(bufferEvent)
        guard fd >= 0 else { return }
        let context = Unmanaged.passRetained(self).toOpaque()
        watch = event_new(
            base, fd, Int16(EV_READ),
            { fd, _, context in
                let pending = Unmanaged<PendingRequest>.fromOpaque(context!).takeUnretainedValue()
                var byte: UInt8 = 0
                let received = recv(fd, &byte, 1, Int32(MSG_PEEK | MSG_DONTWAIT))
                if received == 0 || (received < 0 && errno != EAGAIN && errno != EWOULDBLOCK) {
                    pending.clientGone = true
                    pending.task?.cancel()
                }
                // received > 0: a pipelined request, not a hang-up. The one-shot event stops watching.
            }, context)
        if watch == nil || event_add(watch, nil) != 0 {
            if let watch { event_free(watch) }
            watch = nil
            Unmanaged<PendingRequest>.fromOpaque(context).release()
        }
    }

    /// Frees the watch event (its callback can no longer run) and drops the retain it held.
    func stopWatching() {
        guard let watch else { return }
        event_free(watch)
        self.watch = nil
        Unmanaged.passUnretained(self).release()
    }
}
