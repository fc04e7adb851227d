import MetEngine

/// What `RedisTier` asks of its way to Redis: `RedisLink` in the server, a scripted stand-in in
/// the tier's unit tests (where no Redis runs and no time passes by itself).
///
/// A call never waits longer than the connection's timeout: it answers nil when the connection is
/// down, breaks or is slow. Jobs given to `after` and the handlers given to `start` run on the
/// connection's own thread, one at a time. Any thread.
protocol RedisConnection: AnyObject, Sendable {
    /// The connection's state: connected, round trip, calls unanswered, disconnects, last error.
    var status: SharedTierStatus { get }

    /// Starts connecting; called once. `onMessage` is told each payload published on the group's
    /// channel, `onReady` each time the connection becomes ready (at first and after each loss).
    func start(onMessage: @escaping @Sendable ([UInt8]) -> Void, onReady: @escaping @Sendable () -> Void)

    /// Sends `arguments` as one command and tells `then` its answer, once, on the connection's
    /// thread: nil when there was none in time (a reply that arrives later is dropped).
    func call(_ arguments: [[UInt8]], then: @escaping @Sendable (RedisReply?) -> Void)

    /// Sends `arguments` without waiting for the answer (a store, a release, a notice).
    func send(_ arguments: [[UInt8]])

    /// Runs `job` on the connection's thread after `seconds`.
    func after(_ seconds: Double, _ job: @escaping @Sendable () -> Void)
}

extension RedisConnection {
    /// `call(_:then:)`, awaited.
    func call(_ arguments: [[UInt8]]) async -> RedisReply? {
        await awaitDelivery { call(arguments, then: $0) }
    }
}
