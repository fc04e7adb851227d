import CLibevent
import Foundation
import MetCore
import Synchronization

/// One libevent loop on its own thread, with its own `evhttp` accepting on a shared listening
/// socket. Requests are parsed and, when the core can, answered inside the libevent callback;
/// the rest become tasks whose responses are posted back here.
///
/// Everything but `execute(_:)` and the atomic counters runs on the loop thread only.
final class HTTPLoop: @unchecked Sendable {
    let index: Int
    private let base: OpaquePointer
    private let http: OpaquePointer
    private var boundSocket: OpaquePointer?
    private var wakeEvent: OpaquePointer?
    private let responder: any Responder
    private let logger: Logger
    private let jobs = Locked(JobQueue())
    /// Requests that went async, by ID; loop thread only.
    private var pending: [UInt64: PendingRequest] = [:]
    private var nextID: UInt64 = 0
    /// Set when the server drains: replies then carry `Connection: close`.
    private var draining = false
    /// Requests received but whose reply has not been fully written yet (any thread may read).
    let outstanding = Atomic<Int>(0)

    /// Creates the loop's event base and evhttp. Must run on the loop's own thread, which then
    /// calls `run()`.
    init(
        index: Int, listeningDescriptor: CInt, configuration: HTTPServerConfiguration, responder: any Responder,
        logger: Logger
    ) throws {
        guard let base = event_base_new() else { throw HTTPServerError("event_base_new") }
        guard let http = evhttp_new(base) else {
            event_base_free(base)
            throw HTTPServerError("evhttp_new")
        }
        self.index = index
        self.base = base
        self.http = http
        self.responder = responder
        self.logger = logger

        let limits = configuration.limits
        // Backstops above the core's own limits, so the core answers first with a problem document.
        evhttp_set_max_headers_size(http, limits.maxURILength + limits.maxHeaderBytes + 4_096)
        evhttp_set_max_body_size(http, max(limits.maxBodyBytes, 65_536) * 16)
        var timeout = timeval(tv_sec: Int(configuration.idleTimeout), tv_usec: 0)
        evhttp_set_timeout_tv(http, &timeout)
        // Every method reaches the core, which owns the 405 policy; libevent would send HTML 501s.
        evhttp_set_allowed_methods(http, 0x1FF)
        // Otherwise libevent labels every response without a Content-Type (302, 304, 204) as
        // text/html; ours set theirs.
        evhttp_set_default_content_type(http, nil)
        evhttp_set_gencb(
            http,
            { request, context in
                guard let request, let context else { return }
                Unmanaged<HTTPLoop>.fromOpaque(context).takeUnretainedValue().handle(request)
            }, Unmanaged.passUnretained(self).toOpaque())

        wakeEvent = event_new(
            base, -1, 0,
            { _, _, context in
                Unmanaged<HTTPLoop>.fromOpaque(context!).takeUnretainedValue().drainJobs()
            }, Unmanaged.passUnretained(self).toOpaque())
        guard wakeEvent != nil else { throw HTTPServerError("event_new") }
        guard let bound = evhttp_accept_socket_with_handle(http, listeningDescriptor) else {
            throw HTTPServerError("evhttp_accept_socket_with_handle")
        }
        boundSocket = bound
    }

    /// Runs the loop until `close()` breaks it, then frees the base. Loop thread; blocks.
    func run() {
        _ = event_base_loop(base, EVLOOP_NO_EXIT_ON_EMPTY)
        event_base_free(base)
    }

    /// Runs `job` on the loop thread. Safe from any thread or task; only the first job after a
    /// drain pays for the wake-up.
    /// Jobs posted after `close()` are dropped.
    func execute(_ job: @escaping @Sendable () -> Void) {
        jobs.withLock { queue in
            guard !queue.closed else { return }
            queue.jobs.append(job)
            // Inside the lock, so `close()` cannot free the event between the check and the call.
            if queue.jobs.count == 1 { event_active(wakeEvent, 0, 0) }
        }
    }

    private func drainJobs() {
        let batch = jobs.withLock { queue -> [@Sendable () -> Void] in
            let taken = queue.jobs
            queue.jobs.removeAll(keepingCapacity: true)
            return taken
        }
        for job in batch { job() }
    }

    /// Closures waiting to run on the loop thread.
    private struct JobQueue {
        var jobs: [@Sendable () -> Void] = []
        var closed = false
    }

    // MARK: Requests

    private func handle(_ raw: OpaquePointer) {
        let started = DispatchTime.now().uptimeNanoseconds
        outstanding.add(1, ordering: .relaxed)
        evhttp_request_set_on_complete_cb(
            raw,
            { _, context in
                Unmanaged<HTTPLoop>.fromOpaque(context!).takeUnretainedValue().outstanding.subtract(
                    1, ordering: .relaxed)
            }, Unmanaged.passUnretained(self).toOpaque())

        let request = RequestBridge.request(from: raw)
        if let response = responder.respondImmediately(to: request) {
            reply(raw, request: request, with: response, started: started)
            return
        }
        nextID &+= 1
        let id = nextID
        let entry = PendingRequest(request: LoopPointer(raw))
        pending[id] = entry
        entry.watchForHangUp(base: base)
        // The bridge into Swift concurrency: the task holds only the ID; the evhttp request never
        // leaves this thread, and the response comes back through `execute`.
        entry.task = Task { [responder] in
            let response = await responder.respond(to: request)
            self.execute { self.complete(id, request: request, with: response, started: started) }
        }
    }

    private func complete(_ id: UInt64, request: Request, with response: Response, started: UInt64) {
        guard let entry = pending.removeValue(forKey: id) else { return }
        entry.stopWatching()
        var response = response
        if entry.clientGone { response.status = 499 }
        reply(entry.request.raw, request: request, with: response, started: started)
    }

    /// Sends `response` for `raw`, exactly once; `raw` must not be touched afterwards.
    private func reply(_ raw: OpaquePointer, request: Request, with response: Response, started: UInt64) {
        let bytes = RequestBridge.send(response, to: raw, isHead: request.isHead, closeConnection: draining)
        if logger.isEnabled(.info) {
            let micros = Double(DispatchTime.now().uptimeNanoseconds - started) / 1_000
            logger.info(
                "access \(request.method) \(request.target.prefix(300)) \(response.status) \(bytes)B "
                    + "\(String(format: "%.2f", micros / 1_000))ms \(response.cacheOutcome.rawValue)")
        }
    }

    // MARK: Shutdown

    /// Stops accepting new connections; replies from now on close their connection. Loop thread.
    func stopAccepting() {
        draining = true
        if let boundSocket {
            evhttp_del_accept_socket(http, boundSocket)
            self.boundSocket = nil
        }
    }

    /// Answers every request still waiting for the core with 503 `shutting_down`. Loop thread.
    func abandonPending() {
        for (id, entry) in pending {
            entry.task?.cancel()
            pending[id] = nil
            entry.stopWatching()
            let problem = Problem(.shuttingDown, "The server is shutting down; retry shortly.")
            _ = RequestBridge.send(problem.response, to: entry.request.raw, isHead: false, closeConnection: true)
        }
    }

    /// Frees the evhttp (closing its connections) and the wake event, and ends the loop. Loop
    /// thread; the loop object must not be used afterwards.
    func close() {
        jobs.withLock { $0.closed = true }
        evhttp_free(http)
        if let wakeEvent { event_free(wakeEvent) }
        wakeEvent = nil
        event_base_loopbreak(base)
    }
}
