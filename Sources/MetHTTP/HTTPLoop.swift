import CLibevent
import EventLoops
import Foundation
import HTTPWire
import MetEngine
import Synchronization

/// One HTTP loop: an `EventLoop` accepting on its own listening socket and serving its
/// connections. Requests are parsed and, when the core can, answered inside the read callback;
/// the rest become tasks (`TaskBridge`) whose responses are posted back here.
///
/// Everything but `execute(_:)` and the atomic counter runs on the loop thread only.
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

    let eventLoop: EventLoop
    let limits: WireLimits
    /// `--idle-timeout`, for `event_add`.
    let idleTimeout: timeval
    let idleTimeoutSeconds: Double
    /// `--read-timeout`, in seconds.
    let readTimeoutSeconds: Double
    /// Set once in `init`.
    private var acceptor: ConnectionAcceptor!
    private var bridge: TaskBridge!
    private let responder: any Responder
    private let logger: Logger
    private var connections: [CInt: HTTPConnection] = [:]
    private var requestIDs = RequestIDs()
    private let accessLog: AccessLogBuffer?
    private var wire = WireEncoder()
    /// Set when the server drains: replies then carry `Connection: close`.
    private var draining = false
    /// Requests received whose reply has not been fully written yet (any thread may read).
    let outstanding = Atomic<Int>(0)

    /// Starts accepting on `listeningDescriptor`, which the loop then owns, on `eventLoop`: before
    /// that loop starts, or on its thread.
    init(
        eventLoop: EventLoop, listeningDescriptor: CInt, configuration: HTTPServerConfiguration,
        budget: ConnectionBudget, responder: any Responder, logger: Logger
    ) throws {
        self.eventLoop = eventLoop
        self.responder = responder
        self.logger = logger
        accessLog = configuration.accessLog.map { AccessLogBuffer(log: $0, loop: eventLoop) }
        let core = configuration.limits
        limits = WireLimits(
            targetBytes: core.maxURILength + 1_024, headBytes: core.maxURILength + core.maxHeaderBytes + 4_096,
            bodyBytes: core.maxBodyBytes)
        idleTimeoutSeconds = configuration.idleTimeout
        idleTimeout = EventLoop.interval(seconds: configuration.idleTimeout)
        readTimeoutSeconds = configuration.readTimeout
        bridge = TaskBridge(loop: eventLoop) { [unowned self] exchange, response in finish(exchange, with: response) }
        acceptor = try ConnectionAcceptor(
            loop: eventLoop, listeningDescriptor: listeningDescriptor, budget: budget, logger: logger,
            serve: { [unowned self] in serve($0) }, shed: { [unowned self] in shedConnections() })
    }

    /// Runs `job` on the loop thread. Safe from any thread or task; jobs posted after `close()`
    /// are dropped.
    func execute(_ job: @escaping @Sendable () -> Void) {
        eventLoop.execute(job)
    }

    // MARK: Connections

    /// Seconds since the epoch, as of this loop iteration (no system call).
    var cachedNow: Double { eventLoop.cachedNow }

    /// The `Date` field line for `response` written now (see `WireEncoder.dateLine`).
    func dateLine(for response: Response) -> [UInt8] {
        wire.dateLine(for: response, at: eventLoop.cachedSecond)
    }

    /// `response` as written now to the request known as `requestID` (see `WireEncoder.encode`).
    func encode(_ response: Response, isHead: Bool, minorVersion: Int, close: Bool, requestID: String) -> (
        head: [UInt8], body: [UInt8]
    ) {
        wire.encode(
            response, isHead: isHead, minorVersion: minorVersion, close: close, requestID: requestID,
            at: eventLoop.cachedSecond)
    }

    /// Serves `descriptor`, a connected non-blocking stream socket whose slot in the budget is
    /// taken; the loop owns it from now on.
    private func serve(_ descriptor: CInt) {
        let connection = HTTPConnection(descriptor: descriptor, loop: self)
        connections[descriptor] = connection
        _ = connection.start(base: eventLoop.base)
    }

    /// Serves `descriptor` as if the loop had just accepted it (see `ConnectionAcceptor.adopt`).
    /// Loop thread.
    func adopt(descriptor: CInt) {
        acceptor.adopt(descriptor: descriptor)
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

    /// Called by a connection as it closes.
    func forget(_ connection: HTTPConnection) {
        connections[connection.descriptor] = nil
        acceptor.budget.release()
    }

    // MARK: Requests

    /// Answers one request read by `connection`: inside this callback when the core can,
    /// otherwise through the bridge, whose task's response comes back via `execute`.
    func handle(_ head: RequestHead, body: [UInt8], on connection: HTTPConnection) {
        let started = RequestStart(
            uptime: DispatchTime.now().uptimeNanoseconds, time: cachedNow,
            requestID: requestIDs.id(given: connection.peer.isLoopback ? head.field(named: "X-Request-Id") : nil))
        outstanding.add(1, ordering: .relaxed)
        switch responder.respond(to: head.request(body: body, peer: connection.peer, requestID: started.requestID)) {
        case .ready(let response):
            reply(response, to: head, on: connection, started: started, suspended: false)
        case .suspended(let rest):
            connection.await(bridge.suspend(rest, connection: connection, head: head, started: started))
        }
    }

    /// The bridge's answer to a suspended request.
    private func finish(_ exchange: TaskBridge.Exchange, with response: Response) {
        if exchange.clientGone {
            var response = response
            response.status = 499
            log(exchange.head, response, bytes: 0, started: exchange.started, suspended: true, on: exchange.connection)
            responder.finished(response, seconds: exchange.started.elapsed)
            responseFinished()
            return
        }
        reply(response, to: exchange.head, on: exchange.connection, started: exchange.started, suspended: true)
        exchange.connection.processInput()
    }

    /// The client of request `id` hung up: its task is cancelled (a shared upstream fetch goes on
    /// while others wait for it).
    func clientLeft(_ id: UInt64) {
        bridge.clientLeft(id)
    }

    /// An ID for a request the HTTP layer answers itself, before the core saw it.
    func unreadRequestID() -> String { requestIDs.next() }

    private func reply(
        _ response: Response, to head: RequestHead, on connection: HTTPConnection, started: RequestStart,
        suspended: Bool
    ) {
        let bytes = connection.send(response, for: head, closing: draining, requestID: started.requestID)
        log(head, response, bytes: bytes, started: started, suspended: suspended, on: connection)
        responder.finished(response, seconds: started.elapsed)
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

    // MARK: The access log

    /// Logs the answer to a request that could not be read (method and target unknown).
    func logRejected(_ response: Response, requestID: String, on connection: HTTPConnection) {
        responder.finished(response, seconds: 0)
        accessLog?.record(
            AccessRecord(
                time: cachedNow, client: connection.peer.text, requestID: requestID, method: "-", target: "-",
                status: response.status, bytes: response.body.count, duration: 0, cache: .none, upstream: nil,
                userAgent: nil))
    }

    private func log(
        _ head: RequestHead, _ response: Response, bytes: Int, started: RequestStart, suspended: Bool,
        on connection: HTTPConnection
    ) {
        guard let accessLog else { return }
        let duration = started.elapsed
        accessLog.record(
            AccessRecord(
                time: started.time, client: response.clientAddress ?? connection.peer.text,
                requestID: started.requestID,
                method: Self.clipped(head.method, to: 20), target: Self.clipped(head.target, to: 2_048),
                status: response.status, bytes: bytes, duration: duration, cache: response.cacheOutcome,
                upstream: suspended ? duration : nil,
                userAgent: head.field(named: "User-Agent").map { Self.clipped($0, to: 512) }))
    }

    /// `text`'s first `limit` characters: `text` itself when its UTF-8 is no longer than that
    /// (nearly always, and known without walking it), else cut by characters.
    private static func clipped(_ text: String, to limit: Int) -> String {
        text.utf8.count <= limit ? text : String(text.prefix(limit))
    }

    // MARK: Shutdown

    /// Stops accepting new connections and closes idle ones; replies from now on close their
    /// connection. Loop thread.
    func stopAccepting() {
        draining = true
        acceptor.stop()
        for connection in connections.values where connection.isIdle { connection.close() }
    }

    /// Answers every request still waiting for the core with 503 `shutting_down`. Loop thread.
    func abandonPending() {
        for exchange in bridge.abandonAll() {
            let problem = Problem(.shuttingDown, "The server is shutting down; retry shortly.")
            let response = responder.unread(
                problem.response, requestID: exchange.started.requestID, origin: exchange.head.field(named: "Origin"))
            if exchange.clientGone {
                var gone = response
                gone.status = 499
                log(exchange.head, gone, bytes: 0, started: exchange.started, suspended: true, on: exchange.connection)
                responder.finished(gone, seconds: exchange.started.elapsed)
                responseFinished()
                continue
            }
            // `draining` is set: the answer closes its connection.
            reply(response, to: exchange.head, on: exchange.connection, started: exchange.started, suspended: true)
        }
    }

    /// Closes every connection, writes the access lines held and ends the loop. Loop thread; the
    /// loop object must not be used afterwards.
    func close() {
        stopAccepting()
        for connection in Array(connections.values) { connection.close() }
        accessLog?.flush()
        eventLoop.stop()
    }
}
