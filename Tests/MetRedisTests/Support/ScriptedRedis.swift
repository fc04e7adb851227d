import MetEngine

@testable import MetRedis

/// A `RedisConnection` with no Redis behind it, for `RedisTier`'s unit tests. It records every
/// command, keeps what `SET` stores for `GET` (`NX` honoured; lifetimes recorded, never enforced),
/// answers `EVAL` with `1` and `PTTL` with `-2` unless told otherwise, and runs no timer by
/// itself: `fireTimers()` runs the jobs scheduled so far, on the caller's thread, as the
/// connection's thread would. With `answering` false it is a Redis that never answers in time:
/// every call is nil and nothing is stored. Any thread.
final class ScriptedRedis: RedisConnection {
    private struct State {
        var values: [String: [UInt8]] = [:]
        var commands: [[[UInt8]]] = []
        var timers: [(seconds: Double, job: @Sendable () -> Void)] = []
        var onMessage: (@Sendable ([UInt8]) -> Void)?
        var onReady: (@Sendable () -> Void)?
        var answering = true
        /// Answers by command name, in place of the scripted ones.
        var replies: [String: RedisReply] = [:]
        /// Tasks in `waitUntil`, with what they wait for.
        var waiting: [(condition: @Sendable (State) -> Bool, continuation: CheckedContinuation<Void, Never>)] = []
    }

    private let state = Locked(State())

    var status: SharedTierStatus {
        SharedTierStatus(
            location: "redis://scripted", connected: true, roundTrip: 0.001, unavailable: 0, disconnects: 0,
            lastError: nil)
    }

    func start(onMessage: @escaping @Sendable ([UInt8]) -> Void, onReady: @escaping @Sendable () -> Void) {
        change {
            $0.onMessage = onMessage
            $0.onReady = onReady
        }
    }

    func call(_ arguments: [[UInt8]], then: @escaping @Sendable (RedisReply?) -> Void) {
        then(change { Self.run(arguments, in: &$0) })
    }

    func send(_ arguments: [[UInt8]]) {
        change { _ = Self.run(arguments, in: &$0) }
    }

    func after(_ seconds: Double, _ job: @escaping @Sendable () -> Void) {
        change { $0.timers.append((seconds, job)) }
    }

    // MARK: What the test does

    /// Whether calls are answered (the default) or every one times out.
    var answering: Bool {
        get { state.withLock { $0.answering } }
        set { change { $0.answering = newValue } }
    }

    /// Answers every later command named `command` (`GET`, `EVAL`, ...) with `reply`.
    func answer(_ command: String, with reply: RedisReply) {
        change { $0.replies[command] = reply }
    }

    /// Stores `value` under `key` as another instance (or anyone who can write to Redis) would.
    func put(_ key: String, _ value: [UInt8]) {
        change { $0.values[key] = value }
    }

    func value(_ key: String) -> [UInt8]? {
        state.withLock { $0.values[key] }
    }

    /// Every command received, each as its arguments.
    var commands: [[[UInt8]]] { state.withLock { $0.commands } }

    /// The arguments after the script of every `EVAL` of `script`: the key count, keys, arguments.
    func evaluations(of script: String) -> [[[UInt8]]] {
        commands.filter { $0.count > 1 && $0[0] == Array("EVAL".utf8) && $0[1] == Array(script.utf8) }
            .map { Array($0.dropFirst(2)) }
    }

    /// The delays of the jobs scheduled and not run yet, in seconds, in the order scheduled.
    var timerDelays: [Double] { state.withLock { $0.timers.map(\.seconds) } }

    /// Runs the jobs scheduled so far (not those they schedule), in order.
    func fireTimers() {
        let due = change { state -> [@Sendable () -> Void] in
            defer { state.timers = [] }
            return state.timers.map(\.job)
        }
        for job in due { job() }
    }

    /// Publishes `payload` on the group's channel.
    func publish(_ payload: [UInt8]) {
        state.withLock { $0.onMessage }?(payload)
    }

    /// The connection becomes ready, as after a (re)connection.
    func becomeReady() {
        state.withLock { $0.onReady }?()
    }

    /// Returns once `count` jobs wait in the timers (a waiter in `awaitFill` registers its deadline).
    func waitForTimers(_ count: Int) async {
        await waitUntil { $0.timers.count >= count }
    }

    /// Returns once `count` commands named `name` have come.
    func waitForCommands(_ name: String, count: Int) async {
        let name = Array(name.utf8)
        await waitUntil { state in state.commands.count { $0.first == name } >= count }
    }

    // MARK: Inside

    private func waitUntil(_ condition: @escaping @Sendable (State) -> Bool) async {
        await withCheckedContinuation { continuation in
            let met = state.withLock { state in
                if condition(state) { return true }
                state.waiting.append((condition, continuation))
                return false
            }
            if met { continuation.resume() }
        }
    }

    /// Applies `body` to the state, then resumes the waiters whose condition now holds.
    private func change<Result>(_ body: (inout State) -> Result) -> Result {
        let (result, met) = state.withLock { state in
            let result = body(&state)
            let snapshot = state
            let (met, unmet) = (
                snapshot.waiting.filter { $0.condition(snapshot) }, snapshot.waiting.filter { !$0.condition(snapshot) }
            )
            state.waiting = unmet
            return (result, met.map(\.continuation))
        }
        for continuation in met { continuation.resume() }
        return result
    }

    private static func run(_ arguments: [[UInt8]], in state: inout State) -> RedisReply? {
        state.commands.append(arguments)
        guard state.answering, let name = arguments.first else { return nil }
        let command = String(decoding: name, as: UTF8.self)
        if let reply = state.replies[command] { return reply }
        switch command {
        case "GET" where arguments.count == 2:
            return state.values[String(decoding: arguments[1], as: UTF8.self)].map(RedisReply.string) ?? .null
        case "SET" where arguments.count >= 3:
            let key = String(decoding: arguments[1], as: UTF8.self)
            if arguments.contains(Array("NX".utf8)), state.values[key] != nil { return .null }
            state.values[key] = arguments[2]
            return .status("OK")
        case "EVAL": return .integer(1)
        case "PTTL": return .integer(-2)
        default: return .error("ERR unknown command '\(command)'")
        }
    }
}
