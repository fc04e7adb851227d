import Foundation
import MetCore

/// The shared tier over Redis (see `SharedTier`). Keys, all under the group's prefix:
/// `entry:<cache key>` (an entry's record, expiring at its stale-until), `lock:<cache key>` (the
/// fill lock, a random token), `budget` (the GCRA state), `breaker` (the end of the group's block);
/// the channel `events` carries `SharedNotice`s. Any thread.
public final class RedisTier: SharedTier {
    /// One task waiting in `awaitFill`: resumed once, by the notice, the entry, or the deadline.
    private final class Waiter: Sendable {
        let id: UInt64
        /// The entry counts once it is fresh at this time.
        let freshAt: Double
        private let continuation: Locked<CheckedContinuation<SharedWait, Never>?>

        init(id: UInt64, freshAt: Double, continuation: CheckedContinuation<SharedWait, Never>) {
            self.id = id
            self.freshAt = freshAt
            self.continuation = Locked(continuation)
        }

        func resume(_ value: SharedWait) {
            let continuation = continuation.withLock { pending in
                defer { pending = nil }
                return pending
            }
            continuation?.resume(returning: value)
        }
    }

    private let link: RedisLink
    private let prefix: String
    private let channel: [UInt8]
    private let time: any TimeSource
    /// Tasks in `awaitFill`, by cache key, then by waiter.
    private let waiters = Locked([String: [UInt64: Waiter]]())
    private let nextWaiter = Locked<UInt64>(0)
    private let handler = Locked<(@Sendable (SharedEvent) -> Void)?>(nil)

    /// Connects in the background: until Redis answers, every call is `unavailable`.
    ///
    /// - Parameters:
    ///   - timeout: seconds one call may wait (`--redis-timeout`).
    ///   - downNotice: what the log says the server does while Redis is down.
    ///   - time: the clock of the entries' times and the block's end (the wall clock).
    public init(
        address: RedisAddress, prefix: String, timeout: Double, downNotice: String, time: any TimeSource,
        logger: Logger
    ) throws(RedisError) {
        self.prefix = prefix
        channel = Array((prefix + "events").utf8)
        self.time = time
        link = try RedisLink(
            settings: RedisLink.Settings(
                address: address, timeout: timeout, channel: prefix + "events", downNotice: downNotice),
            logger: logger)
        link.onMessage = { [weak self] payload in self?.received(payload) }
        link.onReady = { [weak self] in self?.readBreaker() }
        link.start()
    }

    public var status: SharedTierStatus { link.status }

    public func onEvent(_ handler: @escaping @Sendable (SharedEvent) -> Void) {
        self.handler.withLock { $0 = handler }
    }

    public func entry(for key: String) async -> SharedLookup {
        switch await link.call([Self.get, entryKey(key)]) {
        case .string(let record):
            // Another version's record (a rolling upgrade), or damage: a miss, which the fetch
            // that follows overwrites. Not removed: an instance of the other version reads it.
            return CacheEntry(record: record, key: key).map(SharedLookup.found) ?? .missing
        case .null: return .missing
        default: return .unavailable
        }
    }

    public func store(_ entry: CacheEntry) {
        let milliseconds = Int(((entry.staleUntil - time.now()) * 1_000).rounded(.up))
        guard milliseconds > 0 else { return }
        link.send([Self.set, entryKey(entry.key), entry.record, Self.px, Array(String(milliseconds).utf8)])
    }

    public func remove(_ key: String) async -> Bool? {
        let reply = await link.call(
            Self.eval(RedisScripts.purge, keys: [entryKey(key)], [channel, SharedNotice.purge(key: key).payload]))
        guard case .integer(let removed) = reply else { return nil }
        return removed > 0
    }

    public func lock(_ key: String, for seconds: Double) async -> SharedLock {
        let token = Array(UUID().uuidString.utf8)
        let milliseconds = Array(String(max(1, Int((seconds * 1_000).rounded(.up)))).utf8)
        switch await link.call([Self.set, lockKey(key), token, Self.nx, Self.px, milliseconds]) {
        case .status("OK"): return .acquired(token: String(decoding: token, as: UTF8.self))
        case .null: return .held
        default: return .unavailable
        }
    }

    public func release(_ key: String, token: String, outcome: SharedFillOutcome) {
        let notice = SharedNotice.fill(key: key, outcome: outcome).payload
        link.send(Self.eval(RedisScripts.release, keys: [lockKey(key)], [Array(token.utf8), channel, notice]))
    }

    public func awaitFill(_ key: String, freshAt: Double, until deadline: Double) async -> SharedWait {
        let id = nextWaiter.withLock { next in
            next += 1
            return next
        }
        return await withCheckedContinuation { continuation in
            let waiter = Waiter(id: id, freshAt: freshAt, continuation: continuation)
            waiters.withLock { $0[key, default: [:]][id] = waiter }
            link.after(deadline - time.now()) { [weak self] in self?.finish(waiter, key: key, with: .nothing) }
            // A fill announced before the waiter was registered: the entry is there already.
            Task { await self.look(for: waiter, key: key, whenMissing: nil) }
        }
    }

    public func takeToken(ratePerSecond: Double, burst: Int) async -> SharedToken {
        let interval = Array(String(Int((1_000_000 / ratePerSecond).rounded())).utf8)
        let reply = await link.call(
            Self.eval(
                RedisScripts.takeToken, keys: [Array((prefix + "budget").utf8)], [interval, Array(String(burst).utf8)]))
        guard case .integer(let wait) = reply else { return .unavailable }
        return wait <= 0 ? .granted : .wait(seconds: Double(wait) / 1_000_000)
    }

    public func announceBlock(until: Double) {
        let milliseconds = Int(((until - time.now()) * 1_000).rounded(.up))
        guard milliseconds > 0 else { return }
        link.send(
            Self.eval(
                RedisScripts.block, keys: [Array((prefix + "breaker").utf8)],
                [
                    Array(String(until).utf8), Array(String(milliseconds).utf8), channel,
                    SharedNotice.block(until: until).payload,
                ]))
    }

    // MARK: Notices

    /// A payload from the channel, on the Redis thread.
    private func received(_ payload: [UInt8]) {
        switch SharedNotice(payload: payload) {
        case .fill(let key, let outcome):
            let waiting = waiters.withLock { $0.removeValue(forKey: key) } ?? [:]
            for waiter in waiting.values {
                switch outcome {
                case .stored: Task { await self.look(for: waiter, key: key, whenMissing: .nothing) }
                case .failed(let error): waiter.resume(.failed(error))
                case .abandoned: waiter.resume(.nothing)
                }
            }
        case .purge(let key):
            handler.withLock { $0 }?(.purged(key: key))
        case .block(let until):
            handler.withLock { $0 }?(.blocked(until: until))
        case nil:
            break
        }
    }

    /// Reads the entry for a waiter: resumes it when the entry is fresh enough, or with
    /// `whenMissing` when given.
    private func look(for waiter: Waiter, key: String, whenMissing: SharedWait?) async {
        switch await entry(for: key) {
        case .found(let entry) where entry.isFresh(at: waiter.freshAt): finish(waiter, key: key, with: .found(entry))
        case .unavailable: finish(waiter, key: key, with: .unavailable)
        default: if let whenMissing { finish(waiter, key: key, with: whenMissing) }
        }
    }

    private func finish(_ waiter: Waiter, key: String, with value: SharedWait) {
        waiters.withLock { table in
            table[key]?[waiter.id] = nil
            if table[key]?.isEmpty == true { table[key] = nil }
        }
        waiter.resume(value)
    }

    /// On each (re)connection: a block another instance announced while this one was away.
    private func readBreaker() {
        Task {
            guard case .string(let text) = await link.call([Self.get, Array((prefix + "breaker").utf8)]),
                let until = Double(String(decoding: text, as: UTF8.self)), until > time.now()
            else { return }
            handler.withLock { $0 }?(.blocked(until: until))
        }
    }

    // MARK: Commands

    private func entryKey(_ key: String) -> [UInt8] { Array((prefix + "entry:" + key).utf8) }
    private func lockKey(_ key: String) -> [UInt8] { Array((prefix + "lock:" + key).utf8) }

    private static func eval(_ script: String, keys: [[UInt8]], _ arguments: [[UInt8]]) -> [[UInt8]] {
        [Array("EVAL".utf8), Array(script.utf8), Array(String(keys.count).utf8)] + keys + arguments
    }

    private static let get = Array("GET".utf8)
    private static let set = Array("SET".utf8)
    private static let px = Array("PX".utf8)
    private static let nx = Array("NX".utf8)
}
