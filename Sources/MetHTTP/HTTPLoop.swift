import CLibevent
import Foundation
import HTTPWire
import MetCore
import Synchronization

/// One libevent loop on its own thread, accepting on its own listening socket and serving its
/// connections. Requests are parsed and, when the core can, answered inside the read callback;
/// the rest become tasks whose responses are posted back here.
///
/// Everything but `execute(_:)` and the atomic counters runs on the loop thread only.
final class HTTPLoop: @unchecked Sendable {
    /// Byte limits of the wire layer: the head's are backstops above the core's own, which answers
    /// first with its problem documents; the body's is the core's.
    struct WireLimits {
        /// The longest request line looked for before answering 414.
        var targetBytes: Int
        /// The largest request head (request line and header fields).
        var headBytes: Int
        /// The largest request body (`--max-body-size`; larger ones are refused with 413 before
        /// they are buffered).
        var bodyBytes: Int
    }

    let index: Int
    let limits: WireLimits
    /// `--idle-timeout`, for `event_add`.
    let idleTimeout: timeval
    let idleTimeoutSeconds: Double
    /// `--read-timeout`, for `event_add`.
    let readTimeout: timeval
    let readTimeoutSeconds: Double
    /// The cap on open connections, shared with the other loops.
    private let budget: ConnectionBudget
    /// Accepting stopped because the budget is spent (not because of a shortage of descriptors).
    private var acceptPaused = false
    /// A descriptor or memory shortage was logged and no accept has succeeded since.
    private var shortageLogged = false
    private let base: OpaquePointer
    private let listeningDescriptor: CInt
    private var acceptEvent: OpaquePointer?
    private var wakeEvent: OpaquePointer?
    private let responder: any Responder
    private let logger: Logger
    private let jobs = Locked(JobQueue())
    private var connections: [CInt: HTTPConnection] = [:]
    /// Requests that went async, by ID.
    private var pending: [UInt64: Exchange] = [:]
    private var nextID: UInt64 = 0
    private var date = HTTPDate()
    private var requestIDs = RequestIDs()
    /// Where access lines go, with this loop's formatter and the lines not yet handed over.
    private let accessLog: AccessLog?
    private var accessLine: AccessLine
    private var accessBuffer: [UInt8] = []
    private var accessFlushScheduled = false
    /// The `Date` line of the last stored answer sent with its fetch time (`Response.date`).
    private var storedDate = HTTPDate()
    private var encodedHeads = EncodedHeads()
    /// Set when the server drains: replies then carry `Connection: close`.
    private var draining = false
    /// Requests received whose reply has not been fully written yet (any thread may read).
    let outstanding = Atomic<Int>(0)

    /// A request the core answers asynchronously.
    private struct Exchange {
        let connection: HTTPConnection
        let head: RequestHead
        let started: Started
        var task: Task<Void, Never>?
        /// The client left; the answer goes nowhere (logged as 499).
        var clientGone = false
    }

    /// Creates the loop's event base and starts accepting on `listeningDescriptor`, which the
    /// loop then owns. Must run on the loop's own thread, which then calls `run()`.
    init(
        index: Int, listeningDescriptor: CInt, configuration: HTTPServerConfiguration, budget: ConnectionBudget,
        responder: any Responder, logger: Logger
    ) throws {
        guard let config = event_config_new() else { throw HTTPServerError("event_config_new") }
        defer { event_config_free(config) }
        // Coalesces the epoll changes made while handling one batch of events into one call each.
        event_config_set_flag(config, Int32(EVENT_BASE_FLAG_EPOLL_USE_CHANGELIST.rawValue))
        guard let base = event_base_new_with_config(config) else { throw HTTPServerError("event_base_new") }
        self.index = index
        self.base = base
        self.listeningDescriptor = listeningDescriptor
        self.responder = responder
        self.logger = logger
        self.budget = budget
        accessLog = configuration.accessLog
        accessLine = AccessLine(format: configuration.accessLog?.format ?? .text)
        let core = configuration.limits
        limits = WireLimits(
            targetBytes: core.maxURILength + 1_024, headBytes: core.maxURILength + core.maxHeaderBytes + 4_096,
            bodyBytes: core.maxBodyBytes)
        idleTimeoutSeconds = configuration.idleTimeout
        idleTimeout = Self.interval(seconds: configuration.idleTimeout)
        readTimeoutSeconds = configuration.readTimeout
        readTimeout = Self.interval(seconds: configuration.readTimeout)

        let context = Unmanaged.passUnretained(self).toOpaque()
        wakeEvent = event_new(
            base, -1, 0,
            { _, _, context in Unmanaged<HTTPLoop>.fromOpaque(context!).takeUnretainedValue().drainJobs() },
            context)
        acceptEvent = event_new(
            base, listeningDescriptor, Int16(EV_READ | EV_PERSIST),
            { _, _, context in Unmanaged<HTTPLoop>.fromOpaque(context!).takeUnretainedValue().acceptConnections() },
            context)
        guard wakeEvent != nil, acceptEvent != nil, event_add(acceptEvent, nil) == 0 else {
            if let wakeEvent { event_free(wakeEvent) }
            if let acceptEvent { event_free(acceptEvent) }
            event_base_free(base)
            throw HTTPServerError("event_new")
        }
    }

    private static func interval(seconds: Double) -> timeval {
        let whole = seconds.rounded(.down)
        return Glibc.timeval(tv_sec: Int(whole), tv_usec: Int(((seconds - whole) * 1_000_000).rounded()))
    }

    /// Runs the loop until `close()` breaks it, then frees the base. Loop thread; blocks.
    func run() {
        _ = event_base_loop(base, EVLOOP_NO_EXIT_ON_EMPTY)
        event_base_free(base)
    }

    /// Runs `job` on the loop thread. Safe from any thread or task; only the first job after a
    /// drain pays for the wake-up. Jobs posted after `close()` are dropped.
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

    // MARK: Connections

    /// Seconds since the epoch, as of this loop iteration (no system call).
    var cachedNow: Double {
        var now = timeval()
        event_base_gettimeofday_cached(base, &now)
        return Double(now.tv_sec) + Double(now.tv_usec) / 1_000_000
    }

    /// The `Date` field line for `response` written now: when it was fetched, for a stored
    /// answer (`Response.date`, never later than now), else now.
    func dateLine(for response: Response) -> [UInt8] {
        var now = timeval()
        event_base_gettimeofday_cached(base, &now)
        guard let fetched = response.date, fetched < now.tv_sec else { return date.line(at: now.tv_sec) }
        return storedDate.line(at: fetched)
    }

    /// The head of a shared response as sent now (see `EncodedHeads`).
    func encodedHead(
        of response: Response, shared: SharedResponse, isHead: Bool, minorVersion: Int, close: Bool
    ) -> [UInt8] {
        var now = timeval()
        event_base_gettimeofday_cached(base, &now)
        return encodedHeads.head(
            of: response, shared: shared, isHead: isHead, minorVersion: minorVersion, close: close,
            second: now.tv_sec, date: dateLine(for: response))
    }

    private func acceptConnections() {
        // A bounded batch, so a burst of new connections cannot starve the open ones.
        for iteration in 0..<16 {
            guard budget.acquire(for: self) else {
                // The event fired, so on the first pass a client waits; later passes must look.
                guard iteration == 0 || hasPendingConnection() else { return }
                let firstInEpisode = budget.clientWaits()
                acceptPaused = true
                event_del(acceptEvent)
                let shed = shedConnections()
                if shed == 0 { recheckAtCap() }
                if firstInEpisode {
                    logger.warning(
                        "\(budget.limit) connections open (--max-connections); not accepting until some close "
                            + "(closed \(shed) idle or slow to send a request)")
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

    /// Serves `descriptor`, a connected non-blocking stream socket whose slot in the budget is
    /// taken; the loop owns it from now on.
    private func serve(_ descriptor: CInt) {
        let connection = HTTPConnection(descriptor: descriptor, loop: self)
        connections[descriptor] = connection
        _ = connection.start(base: base)
    }

    /// Serves `descriptor` as if the loop had just accepted it: the entry point for tests that
    /// drive a connection over one end of a `socketpair`. The descriptor must be a connected,
    /// non-blocking stream socket; the loop owns it from now on (closed at once when the
    /// connection cap leaves no slot). Loop thread.
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
        var delay = timeval(tv_sec: 0, tv_usec: 500_000)
        event_base_once(
            base, -1, Int16(EV_TIMEOUT),
            { _, _, context in
                let loop = Unmanaged<HTTPLoop>.fromOpaque(context!).takeUnretainedValue()
                guard loop.acceptPaused, loop.acceptEvent != nil else { return }
                if loop.shedConnections() == 0 { loop.recheckAtCap() }
            }, Unmanaged.passUnretained(self).toOpaque(), &delay)
    }

    /// At the connection cap with a client waiting: closes this loop's connections idle for over a
    /// second and those still sending a request begun over a second ago (slowloris), so that
    /// clients that send their request at once are served while others trickle. Their slots go
    /// back to the budget, which resumes accepting. Returns how many it closed. Loop thread.
    private func shedConnections() -> Int {
        let now = cachedNow
        let shed = connections.values.filter { $0.mayBeShed(now: now, age: 1) }
        for connection in shed { connection.close() }
        return shed.count
    }

    /// Whether a connection waits on the listening socket, without taking it.
    private func hasPendingConnection() -> Bool {
        var listener = pollfd(fd: listeningDescriptor, events: Int16(POLLIN), revents: 0)
        return poll(&listener, 1, 0) > 0
    }

    /// A connection closed somewhere and the budget has room again: accept anew. Loop thread.
    func resumeAccepting() {
        guard acceptPaused, let acceptEvent else { return }
        acceptPaused = false
        event_add(acceptEvent, nil)  // Level-triggered: connections already waiting fire it at once.
    }

    /// Out of descriptors or memory: stop accepting for 100 ms rather than spin on the listener.
    /// Logged once until an accept succeeds again.
    private func pauseAccepting(reason: CInt) {
        if !shortageLogged {
            shortageLogged = true
            logger.warning("accept failed (\(String(cString: strerror(reason)))); retrying every 100 ms")
        }
        event_del(acceptEvent)
        var delay = timeval(tv_sec: 0, tv_usec: 100_000)
        event_base_once(
            base, -1, Int16(EV_TIMEOUT),
            { _, _, context in
                let loop = Unmanaged<HTTPLoop>.fromOpaque(context!).takeUnretainedValue()
                if let event = loop.acceptEvent { event_add(event, nil) }
            }, Unmanaged.passUnretained(self).toOpaque(), &delay)
    }

    /// Called by a connection as it closes.
    func forget(_ connection: HTTPConnection) {
        connections[connection.descriptor] = nil
        budget.release()
    }

    // MARK: Requests

    /// Answers one request read by `connection`: inside this callback when the core can,
    /// otherwise through a task whose response comes back via `execute`.
    func handle(_ head: RequestHead, body: [UInt8], on connection: HTTPConnection) {
        let started = Started(
            uptime: DispatchTime.now().uptimeNanoseconds, time: cachedNow,
            requestID: requestIDs.id(given: connection.peer.isLoopback ? head.field(named: "X-Request-Id") : nil))
        outstanding.add(1, ordering: .relaxed)
        let suspension: Suspension
        var request = head.request(body: body, peer: connection.peer)
        request.requestID = started.requestID
        switch responder.respond(to: request) {
        case .ready(let response):
            reply(response, to: head, on: connection, started: started, suspended: false)
            return
        case .suspended(let rest):
            suspension = rest
        }
        nextID &+= 1
        let id = nextID
        connection.await(id)
        var exchange = Exchange(connection: connection, head: head, started: started)
        // The bridge into Swift concurrency: the task holds only the ID; the connection never
        // leaves this thread, and the response comes back through `execute`.
        exchange.task = Task {
            let response = await suspension.response()
            self.execute { self.complete(id, with: response) }
        }
        pending[id] = exchange
    }

    private func complete(_ id: UInt64, with response: Response) {
        guard let exchange = pending.removeValue(forKey: id) else { return }
        if exchange.clientGone {
            var response = response
            response.status = 499
            log(exchange.head, response, bytes: 0, started: exchange.started, suspended: true, on: exchange.connection)
            responder.finished(response, seconds: Self.seconds(since: exchange.started.uptime))
            responseFinished()
            return
        }
        reply(response, to: exchange.head, on: exchange.connection, started: exchange.started, suspended: true)
        exchange.connection.processInput()
    }

    /// The client of request `id` hung up: its task is cancelled (a shared upstream fetch goes on
    /// while others wait for it).
    func clientLeft(_ id: UInt64) {
        pending[id]?.clientGone = true
        pending[id]?.task?.cancel()
    }

    /// When and as what a request arrived.
    struct Started {
        /// `DispatchTime` nanoseconds, for durations.
        let uptime: UInt64
        /// Seconds since 1970, for the access log.
        let time: Double
        let requestID: String
    }

    /// An ID for a request the HTTP layer answers itself, before the core saw it.
    func unreadRequestID() -> String { requestIDs.next() }

    private func reply(
        _ response: Response, to head: RequestHead, on connection: HTTPConnection, started: Started, suspended: Bool
    ) {
        let bytes = connection.send(response, for: head, closing: draining, requestID: started.requestID)
        log(head, response, bytes: bytes, started: started, suspended: suspended, on: connection)
        responder.finished(response, seconds: Self.seconds(since: started.uptime))
    }

    /// Seconds since `started` (`DispatchTime` nanoseconds).
    private static func seconds(since started: UInt64) -> Double {
        Double(DispatchTime.now().uptimeNanoseconds &- started) / 1e9
    }

    /// A reply written (or dropped with its connection).
    func responseFinished() {
        outstanding.subtract(1, ordering: .relaxed)
    }

    /// A request that could not be read is answered by its connection.
    func countUnreadRequest() {
        outstanding.add(1, ordering: .relaxed)
    }

    /// The core's fields added to an answer the HTTP layer made itself (see `Responder.unread`).
    func unread(_ response: Response, requestID: String) -> Response {
        responder.unread(response, requestID: requestID, origin: nil)
    }

    /// Logs the answer to a request that could not be read (method and target unknown).
    func logRejected(_ response: Response, requestID: String, on connection: HTTPConnection) {
        responder.finished(response, seconds: 0)
        guard accessLog != nil else { return }
        record(
            AccessRecord(
                time: cachedNow, client: connection.peer.text, requestID: requestID, method: "-", target: "-",
                status: response.status, bytes: response.body.count, duration: 0, cache: .none, upstream: nil,
                userAgent: nil))
    }

    private func log(
        _ head: RequestHead, _ response: Response, bytes: Int, started: Started, suspended: Bool,
        on connection: HTTPConnection
    ) {
        guard accessLog != nil else { return }
        let duration = Self.seconds(since: started.uptime)
        record(
            AccessRecord(
                time: started.time, client: response.clientAddress ?? connection.peer.text,
                requestID: started.requestID,
                method: String(head.method.prefix(20)), target: String(head.target.prefix(2_048)),
                status: response.status, bytes: bytes, duration: duration, cache: response.cacheOutcome,
                upstream: suspended ? duration : nil,
                userAgent: head.field(named: "User-Agent").map { String($0.prefix(512)) }))
    }

    /// Most bytes of access lines a loop holds before handing them to the log.
    static let accessBufferBytes = 32_768
    /// How long a line waits at most before it is written, in microseconds.
    static let accessFlushMicroseconds = 200_000

    /// Adds one access line to the loop's buffer: written when the buffer fills, within
    /// `accessFlushMicroseconds` otherwise, and when the loop closes.
    private func record(_ record: AccessRecord) {
        accessLine.append(record, to: &accessBuffer)
        if accessBuffer.count >= Self.accessBufferBytes {
            flushAccessLog()
        } else if !accessFlushScheduled {
            accessFlushScheduled = true
            var delay = timeval(tv_sec: 0, tv_usec: Self.accessFlushMicroseconds)
            let scheduled = event_base_once(
                base, -1, Int16(EV_TIMEOUT),
                { _, _, context in
                    let loop = Unmanaged<HTTPLoop>.fromOpaque(context!).takeUnretainedValue()
                    loop.accessFlushScheduled = false
                    loop.flushAccessLog()
                }, Unmanaged.passUnretained(self).toOpaque(), &delay)
            if scheduled != 0 {
                // No timer (out of memory): write now rather than hold the lines indefinitely.
                accessFlushScheduled = false
                flushAccessLog()
            }
        }
    }

    /// Hands the buffered access lines to the log. Loop thread.
    func flushAccessLog() {
        guard let accessLog, !accessBuffer.isEmpty else { return }
        accessLog.write(accessBuffer)
        accessBuffer.removeAll(keepingCapacity: true)
    }

    // MARK: Shutdown

    /// Stops accepting new connections and closes idle ones; replies from now on close their
    /// connection. Loop thread.
    func stopAccepting() {
        draining = true
        if let acceptEvent {
            event_free(acceptEvent)
            self.acceptEvent = nil
            Glibc.close(listeningDescriptor)
        }
        for connection in connections.values where connection.isIdle { connection.close() }
    }

    /// Answers every request still waiting for the core with 503 `shutting_down`. Loop thread.
    func abandonPending() {
        let abandoned = pending
        pending = [:]
        for exchange in abandoned.values {
            exchange.task?.cancel()
            let problem = Problem(.shuttingDown, "The server is shutting down; retry shortly.")
            let response = responder.unread(
                problem.response, requestID: exchange.started.requestID, origin: exchange.head.field(named: "Origin"))
            if exchange.clientGone {
                var gone = response
                gone.status = 499
                log(exchange.head, gone, bytes: 0, started: exchange.started, suspended: true, on: exchange.connection)
                responder.finished(gone, seconds: Self.seconds(since: exchange.started.uptime))
                responseFinished()
                continue
            }
            // `draining` is set: the answer closes its connection.
            reply(response, to: exchange.head, on: exchange.connection, started: exchange.started, suspended: true)
        }
    }

    /// Closes every connection, frees the loop's events and ends the loop. Loop thread; the loop
    /// object must not be used afterwards.
    func close() {
        jobs.withLock { $0.closed = true }
        stopAccepting()
        for connection in Array(connections.values) { connection.close() }
        flushAccessLog()
        if let wakeEvent { event_free(wakeEvent) }
        wakeEvent = nil
        event_base_loopbreak(base)
    }
}
