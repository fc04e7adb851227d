import CHiredis
import CLibevent
import EventLoops
import Foundation
import MetEngine

/// Two connections to one Redis, driven by hiredis's async API on a libevent loop of their own
/// (`hiredis/adapters/libevent.h`), on a thread of its own: one for commands, one subscribed to the
/// group's channel. No loop thread and no request task ever blocks on Redis. A link made on an
/// HTTP loop instead (`init(settings:logger:on:)`, without a channel) has the command connection
/// only, and answers that loop's calls where they are made, with no thread between.
///
/// Every hiredis and libevent call happens on the link's loop thread (the "Redis thread" below);
/// other threads post jobs (`call`, `send`, `after`). A call gets its answer, or nil when the link is not ready, the connection
/// breaks, or no answer came within `timeout` seconds. A call that times out drops both
/// connections: a Redis that is slow once is treated as down until it answers again, so that no
/// later request waits on it. The link reconnects by itself with back-off (0.1 s doubling to 5 s,
/// back to 0.1 s only after it stayed up for 5 s, so that a flapping Redis is not hammered) and
/// logs each change of state once. It is ready once `PING` answers and the subscription is
/// confirmed. A host name is resolved on a thread of its own, so that a slow DNS never holds up
/// the loop (and with it every call's timeout). A reply larger than `Settings.replyLimit` drops
/// the connection before it is read whole: no Redis can make this process hold more.
final class RedisLink: RedisConnection, @unchecked Sendable {
    struct Settings: Sendable {
        var address: RedisAddress
        /// Seconds one call may wait for its answer.
        var timeout: Double
        /// The pub/sub channel the subscriber listens to; nil for a link without a subscriber.
        var channel: String?
        /// What the log says the server does while Redis is down (appended to the notice).
        var downNotice: String
        /// The most bytes of one reply either connection takes: a connection holding more of a reply
        /// unread is dropped (`chiredis_attach`), and made again like any lost one.
        var replyLimit: Int
        /// Whether the link logs its losses and reconnections as warnings and notices; a link of
        /// an HTTP loop, which the group's own link speaks for, logs them at debug level.
        var announces = true
    }

    let settings: Settings
    private let logger: Logger
    let loop: EventLoop
    /// Whether `loop` is the link's own, started by `start`.
    private let ownsLoop: Bool
    /// The oldest call's deadline, the `PING` interval, the reconnect's back-off. Set once in `init`.
    private var timeoutTimer: LoopTimer!
    private var pingTimer: LoopTimer!
    private var reconnectTimer: LoopTimer!
    /// The connections; nil while down. Redis thread only.
    private var commands: UnsafeMutablePointer<redisAsyncContext>?
    private var subscriber: UnsafeMutablePointer<redisAsyncContext>?
    /// Calls sent on `commands`, oldest first (Redis answers in order); `head` is the oldest that
    /// may still be waiting. Redis thread only.
    private var pending: [RedisCall] = []
    private var head = 0
    /// Connected, authenticated and answering. Redis thread only; `status` mirrors it.
    private var ready = false
    /// Whether a loss has been logged since the link was last ready (one line per change of state).
    private var lossLogged = false
    private var backoff = RedisLink.firstBackoff
    /// The connection attempt under way: when it began (monotonic seconds), the `PING` round
    /// trip once answered, whether the subscription is confirmed, whether a name is being
    /// resolved. Redis thread only.
    private var attemptStarted = 0.0
    private var pingRoundTrip: Double?
    private var subscribed = false
    private var resolving = false
    /// When the link last became ready, monotonic seconds.
    private var readySince = 0.0
    private let figures: Locked<SharedTierStatus>
    /// Told each payload published on the channel, on the Redis thread. Set once, by `start`.
    private var onMessage: (@Sendable ([UInt8]) -> Void)?
    /// Told each time the link becomes ready, on the Redis thread. Set once, by `start`.
    private var onReady: (@Sendable () -> Void)?

    static let firstBackoff = 0.1
    static let longestBackoff = 5.0
    /// Seconds between two round-trip measurements (`PING`).
    static let pingInterval = 1.0
    /// Seconds the link must stay ready before a loss starts the back-off from the beginning.
    static let stableSeconds = 5.0

    /// A link on `loop` (an HTTP loop, which runs already: call from its thread), or on a loop of
    /// its own when nil.
    init(settings: Settings, logger: Logger, on loop: EventLoop? = nil) throws(RedisError) {
        do {
            self.loop = try loop ?? EventLoop(name: "redis")
        } catch {
            throw RedisError("setting up the Redis loop failed: \(error)")
        }
        ownsLoop = loop == nil
        self.settings = settings
        self.logger = logger
        figures = Locked(
            SharedTierStatus(
                location: settings.address.description, connected: false, roundTrip: nil, unavailable: 0,
                disconnects: 0, lastError: "not connected yet"))
        do {
            timeoutTimer = try LoopTimer(on: self.loop) { [unowned self] in checkTimeouts() }
            pingTimer = try LoopTimer(on: self.loop, repeating: true) { [unowned self] in ping() }
            reconnectTimer = try LoopTimer(on: self.loop) { [unowned self] in connect() }
        } catch {
            throw RedisError("setting up the Redis loop failed: \(error)")
        }
    }

    /// Starts the thread (of a link with a loop of its own), which connects at once and runs for
    /// the life of the process; a link on another loop connects on it, and lives as long as it.
    func start(onMessage: @escaping @Sendable ([UInt8]) -> Void, onReady: @escaping @Sendable () -> Void) {
        // Before the thread starts, which then reads them alone.
        self.onMessage = onMessage
        self.onReady = onReady
        loop.execute { [self] in
            pingTimer.arm(after: Self.pingInterval)
            connect()
        }
        if ownsLoop { loop.start(holding: self) }
    }

    var status: SharedTierStatus { figures.withLock { $0 } }

    func call(_ arguments: [[UInt8]], then: @escaping @Sendable (RedisReply?) -> Void) {
        guard loop.isCurrent else {
            loop.execute { [self] in send(arguments, limit: settings.timeout, whileConnecting: false, completion: then)
            }
            return
        }
        send(arguments, limit: settings.timeout, whileConnecting: false, completion: then)
    }

    /// Whether the link is ready: only on its loop's thread (`loop.isCurrent`), where `ready` lives.
    var isReadyHere: Bool { loop.isCurrent && ready }

    func send(_ arguments: [[UInt8]]) {
        loop.execute { [self] in send(arguments, limit: settings.timeout, whileConnecting: false, completion: nil) }
    }

    func after(_ seconds: Double, _ job: @escaping @Sendable () -> Void) {
        loop.execute { [loop] in loop.schedule(after: seconds, job) }
    }

    // MARK: The Redis thread

    static func link(_ context: UnsafeMutableRawPointer?) -> RedisLink {
        Unmanaged<RedisLink>.fromOpaque(context!).takeUnretainedValue()
    }

    /// Sends one command on `commands`. Answers nil at once when the link is not ready (or not
    /// connected at all, for the set-up calls made `whileConnecting`).
    private func send(
        _ arguments: [[UInt8]], limit: Double, whileConnecting: Bool, completion: ((RedisReply?) -> Void)?
    ) {
        guard let context = commands, ready || whileConnecting else {
            figures.withLock { $0.unavailable += 1 }
            completion?(nil)
            return
        }
        let call = RedisCall(sentAt: Self.monotonic(), limit: limit, completion: completion)
        let privdata = Unmanaged.passRetained(call).toOpaque()
        guard RedisCommand.send(context, arguments, callback: Self.replied, privdata: privdata) else {
            Unmanaged<RedisCall>.fromOpaque(privdata).release()
            figures.withLock { $0.unavailable += 1 }
            call.finish(nil)
            return
        }
        pending.append(call)
        if !timeoutTimer.isArmed { timeoutTimer.arm(after: limit) }
    }

    /// hiredis's reply callback for `commands`: NULL when the connection went away first.
    private static let replied:
        @convention(c) (UnsafeMutablePointer<redisAsyncContext>?, UnsafeMutableRawPointer?, UnsafeMutableRawPointer?)
            -> Void = { context, reply, privdata in
                guard let privdata else { return }
                let call = Unmanaged<RedisCall>.fromOpaque(privdata).takeRetainedValue()
                let answer = reply.map { RedisReply(UnsafePointer($0.assumingMemoryBound(to: redisReply.self))) }
                if let data = context?.pointee.data, !call.isFinished {
                    RedisLink.link(data).settle(call)
                }
                call.finish(answer)
            }

    /// The answered call leaves the head of the queue.
    private func settle(_ call: RedisCall) {
        while head < pending.count, pending[head] === call || pending[head].isFinished { head += 1 }
        if head == pending.count {
            pending.removeAll(keepingCapacity: true)
            head = 0
        } else if head > 1_024, head * 2 > pending.count {
            pending.removeFirst(head)
            head = 0
        }
    }

    /// The timeout event: drops the link when the oldest call has waited past its limit, else
    /// waits for the next one's.
    private func checkTimeouts() {
        while head < pending.count, pending[head].isFinished { head += 1 }
        guard head < pending.count else {
            pending.removeAll(keepingCapacity: true)
            head = 0
            return
        }
        let oldest = pending[head]
        let waited = Self.monotonic() - oldest.sentAt
        if waited >= oldest.limit {
            lose("no answer within \(Int((oldest.limit * 1_000).rounded())) ms")
        } else {
            timeoutTimer.arm(after: oldest.limit - waited)
        }
    }

    /// Starts a connection attempt: at once for an IP address or a Unix socket; for a host name,
    /// once a thread of its own has resolved it (hiredis would resolve it on this loop, blocking).
    private func connect() {
        guard commands == nil, subscriber == nil, !resolving else { return }
        attemptStarted = Self.monotonic()
        pingRoundTrip = nil
        subscribed = false
        guard case .tcp(let host, let port) = settings.address.endpoint, !HostName.isNumeric(host) else {
            return open(settings.address.endpoint)
        }
        resolving = true
        let thread = Thread { [self] in
            let address = HostName.resolve(host)
            loop.execute { [self] in
                resolving = false
                guard let address else { return lose("cannot resolve \(host)") }
                open(.tcp(host: address, port: port))
            }
        }
        thread.name = "redis-resolve"
        thread.start()
    }

    /// Opens both connections to `endpoint` and sends the set-up calls.
    private func open(_ endpoint: RedisAddress.Endpoint) {
        let address = settings.address
        // A failure to open either loses the link, which lets go of the other.
        guard let commands = context(for: endpoint) else { return }
        self.commands = commands
        var subscriber: UnsafeMutablePointer<redisAsyncContext>?
        if settings.channel != nil {
            guard let made = context(for: endpoint) else { return }
            subscriber = made
            self.subscriber = made
        }
        let setUpLimit = max(settings.timeout, 1)
        if let password = address.password {
            let auth = [Array("AUTH".utf8)] + (address.user.map { [Array($0.utf8)] } ?? []) + [Array(password.utf8)]
            send(auth, limit: setUpLimit, whileConnecting: true) { [self] in expectOK($0, "AUTH") }
            if let subscriber { _ = RedisCommand.send(subscriber, auth, callback: nil, privdata: nil) }
        }
        if address.database != 0 {
            send(
                [Array("SELECT".utf8), Array(String(address.database).utf8)], limit: setUpLimit,
                whileConnecting: true
            ) { [self] in expectOK($0, "SELECT") }
        }
        let started = Self.monotonic()
        send([Array("PING".utf8)], limit: setUpLimit, whileConnecting: true) { [self] reply in
            guard reply == .status("PONG") else { return expectOK(reply, "PING") }
            pingRoundTrip = Self.monotonic() - started
            becomeReadyWhenSet()
        }
        if let subscriber, let channel = settings.channel {
            _ = RedisCommand.send(
                subscriber, [Array("SUBSCRIBE".utf8), Array(channel.utf8)], callback: Self.published, privdata: nil)
        }
    }

    /// hiredis is freeing `context` itself: the link lets go of it, and loses the other one.
    func forget(_ context: UnsafeMutablePointer<redisAsyncContext>, reason: String) {
        if context == commands {
            commands = nil
        } else if context == subscriber {
            subscriber = nil
        } else {
            return  // one the link already let go of
        }
        lose(reason)
    }

    private func expectOK(_ reply: RedisReply?, _ command: String) {
        switch reply {
        case .status: return
        case .error(let message): lose("\(command) refused: \(message)")
        case nil: return  // the loss is being handled already
        default: lose("\(command): unexpected answer")
        }
    }

    /// The subscriber's `["subscribe", channel, count]`: notices reach this instance from now on.
    private func subscriptionConfirmed() {
        subscribed = true
        becomeReadyWhenSet()
    }

    /// Ready once both set-ups are done: `PING` answered, subscription confirmed (when there is one).
    private func becomeReadyWhenSet() {
        guard !ready, subscribed || settings.channel == nil, let roundTrip = pingRoundTrip, commands != nil else {
            return
        }
        ready = true
        readySince = Self.monotonic()
        let wasLost = lossLogged
        lossLogged = false
        figures.withLock {
            $0.connected = true
            $0.roundTrip = roundTrip
            $0.lastError = nil
        }
        let change = "redis: \(wasLost ? "reconnected to" : "connected to") \(settings.address)"
        if settings.announces { logger.info(change) } else { logger.debug(change) }
        onReady?()
    }

    /// Drops both connections (answering every waiting call with nil) and schedules a reconnect.
    func lose(_ reason: String) {
        let wasReady = ready
        ready = false
        let calls = pending[head...]
        let unanswered = calls.count { !$0.isFinished }
        figures.withLock {
            $0.unavailable += unanswered
            if wasReady { $0.disconnects += 1 }
            $0.connected = false
            $0.lastError = reason
        }
        if !lossLogged {
            lossLogged = true
            let loss = "redis \(settings.address): \(reason); \(settings.downNotice)"
            if settings.announces { logger.warning(loss) } else { logger.debug(loss) }
        }
        pending = []
        head = 0
        for call in calls { call.finish(nil) }
        // Let go first, so that the disconnect callbacks the frees run find neither. Inside one of
        // a context's own callbacks, hiredis frees it once the callback returns.
        let doomed = [commands, subscriber].compactMap { $0 }
        commands = nil
        subscriber = nil
        for context in doomed { redisAsyncFree(context) }
        if wasReady, Self.monotonic() - readySince >= Self.stableSeconds { backoff = Self.firstBackoff }
        if !reconnectTimer.isArmed {
            reconnectTimer.arm(after: backoff)
            backoff = min(backoff * 2, Self.longestBackoff)
        }
    }

    /// The ping event: measures the round trip (and, through the timeout, notices a stuck Redis);
    /// drops an attempt whose subscription was not confirmed within the set-up limit.
    private func ping() {
        if !ready, commands != nil, settings.channel != nil, !subscribed,
            Self.monotonic() - attemptStarted > max(settings.timeout, 1)
        {
            return lose("the subscription was not confirmed")
        }
        guard ready else { return }
        let started = Self.monotonic()
        send([Array("PING".utf8)], limit: settings.timeout, whileConnecting: false) { [self] reply in
            guard reply == .status("PONG") else { return }
            let roundTrip = Self.monotonic() - started
            figures.withLock { $0.roundTrip = roundTrip }
        }
    }

    /// hiredis's callback for the subscription: each `["message", channel, payload]`.
    private static let published:
        @convention(c) (UnsafeMutablePointer<redisAsyncContext>?, UnsafeMutableRawPointer?, UnsafeMutableRawPointer?)
            -> Void = { context, reply, _ in
                guard let reply, let data = context?.pointee.data else { return }
                let answer = RedisReply(UnsafePointer(reply.assumingMemoryBound(to: redisReply.self)))
                guard case .array(let parts) = answer, parts.count == 3 else { return }
                let link = RedisLink.link(data)
                if parts[0] == .string(Array("subscribe".utf8)) { return link.subscriptionConfirmed() }
                guard parts[0] == .string(Array("message".utf8)), case .string(let payload) = parts[2] else { return }
                link.onMessage?(payload)
            }

    private static func monotonic() -> Double {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
    }
}

/// A failure to set up the Redis link's loop; the text names what failed.
public struct RedisError: Error, CustomStringConvertible, Sendable {
    public let description: String

    init(_ description: String) {
        self.description = description
    }
}
