import EventLoops
import Foundation
import MetEngine

/// The shared tier over Redis (see `SharedTier`). Keys, all under the group's prefix:
/// `entry:<cache key>` (an entry's record, expiring at its stale-until), `lock:<cache key>` (the
/// fill lock, a random token, renewed by its holder), `budget` (the GCRA state of the API's
/// budget), `breaker` (alive while the group's block of the API lasts), and `budget:<name>` and
/// `breaker:<name>` for each other host's (the image host's), `sync` (when the group's last
/// successful `metadataDate` sync started); the channel `events` carries `SharedNotice`s.
///
/// With the group's secret, every record and notice is signed (`GroupSeal`) and one whose signature
/// does not verify is refused; without it, a record's checksum only catches damage, and whoever
/// can write to Redis can make the group serve anything. Either way a record must be stored under
/// its own key, an object's under its own ID, and no larger than `recordLimit`. Any thread.
public final class RedisTier: SharedTier {
    /// One task waiting in `awaitFill`: resumed once, by the notice, the entry, or the deadline.
    private final class Waiter: Sendable {
        let id: UInt64
        /// The entry counts once it is fresh at this time.
        let freshAt: Double
        private let deliver: Locked<(@Sendable (SharedWait) -> Void)?>

        init(id: UInt64, freshAt: Double, deliver: @escaping @Sendable (SharedWait) -> Void) {
            self.id = id
            self.freshAt = freshAt
            self.deliver = Locked(deliver)
        }

        func resume(_ value: SharedWait) {
            let deliver = deliver.withLock { pending in
                defer { pending = nil }
                return pending
            }
            deliver?(value)
        }
    }

    /// The fill locks this instance asked for.
    private struct Locks {
        /// Held: renewed every `renewInterval` until released.
        var held: [String: [UInt8]] = [:]
        /// Asked for without an answer in time: maybe set, with no holder. Given back (compare and
        /// delete) once Redis answers again; until then their lease runs out by itself.
        var doubtful: [(key: String, token: [UInt8])] = []
        /// Whether a renewal is scheduled.
        var renewing = false
    }

    /// How long a fill lock lives without its holder renewing it, in seconds: the longest a dead
    /// or silent holder (or a lock set after its `SET` timed out) keeps the others waiting.
    public static let lockLease = 3.0
    /// Seconds between two renewals of the locks held: a third of the lease, so that two renewals
    /// may be lost before a live holder's lock runs out.
    static let renewInterval = lockLease / 3
    /// Bytes a reply may hold beyond the largest record: the protocol's framing and the tag.
    static let replyOverhead = 65_536

    private let link: any RedisConnection
    private let prefix: String
    private let channel: [UInt8]
    private let time: any TimeSource
    private let seal: GroupSeal?
    /// The largest record stored or read, in bytes.
    private let recordLimit: Int
    private let logger: Logger
    /// Tasks in `awaitFill`, by cache key, then by waiter.
    private let waiters = Locked([String: [UInt64: Waiter]]())
    private let nextWaiter = Locked<UInt64>(0)
    private let handler = Locked<(@Sendable (SharedEvent) -> Void)?>(nil)
    private let locks = Locked(Locks())
    /// The budgets whose breakers are read on each connection: the API's, and each one a token was
    /// taken of.
    private let budgets = Locked<Set<String>>([""])
    /// Records and notices refused since start-up.
    private let refusals = Locked(0)
    /// The HTTP loops' own links (`attach(to:)`), each answering the lookups made on its loop.
    private let loopLinks = Locked<[RedisLink]>([])

    /// Connects in the background: until Redis answers, every call is `unavailable`.
    ///
    /// - Parameters:
    ///   - timeout: seconds one call may wait (`--redis-timeout`).
    ///   - downNotice: what the log says the server does while Redis is down.
    ///   - secret: the group's secret (`--redis-secret`), which signs what this instance writes
    ///     and must sign what it reads; nil for none.
    ///   - recordLimit: the largest record stored or read, in bytes; a reply larger than it (and
    ///     its framing) drops the connection.
    ///   - time: the clock of the entries' times (the wall clock).
    /// - Throws: when the loop cannot be made, or libcrypto cannot key the seal.
    public convenience init(
        address: RedisAddress, prefix: String, timeout: Double, downNotice: String, secret: String?,
        recordLimit: Int, time: any TimeSource, logger: Logger
    ) throws(RedisError) {
        let link = try RedisLink(
            settings: RedisLink.Settings(
                address: address, timeout: timeout, channel: prefix + "events", downNotice: downNotice,
                replyLimit: recordLimit + GroupSeal.tagBytes + Self.replyOverhead),
            logger: logger)
        try self.init(link: link, prefix: prefix, secret: secret, recordLimit: recordLimit, time: time, logger: logger)
    }

    /// The tier over `link`, which it starts. `link` must listen to the channel `<prefix>events`.
    init(
        link: any RedisConnection, prefix: String, secret: String?, recordLimit: Int, time: any TimeSource,
        logger: Logger
    ) throws(RedisError) {
        self.link = link
        self.prefix = prefix
        channel = Array((prefix + "events").utf8)
        self.time = time
        self.recordLimit = recordLimit
        self.logger = logger
        if let secret {
            guard let seal = GroupSeal(secret: secret) else { throw RedisError("cannot key HMAC-SHA256 (libcrypto)") }
            self.seal = seal
        } else {
            seal = nil
        }
        link.start(
            onMessage: { [weak self] payload in self?.received(payload) }, onReady: { [weak self] in self?.linkReady() }
        )
    }

    /// Gives each of `loops` (the HTTP loops, running) a command connection of its own, so that a
    /// lookup made on a loop (`entrySoon`) is sent, answered and restored there, with no thread
    /// between: one round trip. Any thread; each link is made on its loop and connects in the
    /// background, and until it is ready its loop's lookups go through the tier's own link. Its
    /// losses are logged at debug level: the tier's own link speaks for the group's Redis.
    public func attach(to loops: [EventLoop]) {
        guard let main = link as? RedisLink else { return }
        var settings = main.settings
        settings.channel = nil
        settings.announces = false
        for loop in loops {
            loop.execute { [self, settings] in
                do {
                    let loopLink = try RedisLink(settings: settings, logger: logger, on: loop)
                    loopLink.start(onMessage: { _ in }, onReady: {})
                    loopLinks.withLock { $0.append(loopLink) }
                } catch {
                    logger.warning("redis: no connection of its own for \(loop.name) (\(error)); the tier's serves it")
                }
            }
        }
    }

    public var status: SharedTierStatus {
        var status = link.status
        status.signed = seal != nil
        status.refused = refusals.withLock { $0 }
        return status
    }

    public func onEvent(_ handler: @escaping @Sendable (SharedEvent) -> Void) {
        self.handler.withLock { $0 = handler }
    }

    public func entry(for key: String) async -> SharedLookup {
        lookup(await link.call([Self.get, entryKey(key)]), of: key)
    }

    /// Through the calling loop's own link when it has a ready one (`attach(to:)`), else the
    /// tier's. The entry is restored (checksum, signature, summary) where the reply arrives.
    public func entrySoon(for key: String, then: @escaping @Sendable (SharedLookup) -> Void) {
        let own = loopLinks.withLock { links in links.first { $0.loop.isCurrent } }
        let through: any RedisConnection = own.flatMap { $0.isReadyHere ? $0 : nil } ?? link
        through.call([Self.get, entryKey(key)]) { [self] reply in then(lookup(reply, of: key)) }
    }

    /// What `GET`'s `reply` says of `key`'s entry.
    private func lookup(_ reply: RedisReply?, of key: String) -> SharedLookup {
        switch reply {
        case .string(let stored):
            // Forged, damaged, another key's, or another version's record (a rolling upgrade): a
            // miss, which the fetch that follows overwrites. Not removed: an instance of the other
            // version reads it.
            guard let entry = restore(stored, key: key) else {
                refusals.withLock { $0 += 1 }
                logger.debug("redis: the record of \(key) was refused (signature, key, damage or version)")
                return .missing
            }
            return .found(entry)
        case .null: return .missing
        default: return .unavailable
        }
    }

    public func store(_ entry: CacheEntry) {
        let milliseconds = Int(((entry.staleUntil - time.now()) * 1_000).rounded(.up))
        guard milliseconds > 0 else { return }
        var record = entry.record
        // Larger than any record the group reads (a huge ID list): each instance keeps its own.
        guard record.count <= recordLimit else { return }
        if let seal {
            guard let sealed = seal.seal(record, .record, key: entry.key) else { return }
            record = sealed
        }
        link.send([Self.set, entryKey(entry.key), record, Self.px, Array(String(milliseconds).utf8)])
    }

    /// The entry a stored value holds for `key`: its signature verified (with a secret), no larger
    /// than `recordLimit`, whole, and `key`'s own (`CacheEntry.restored(record:key:)`); nil otherwise.
    private func restore(_ stored: [UInt8], key: String) -> CacheEntry? {
        var record = stored
        if let seal {
            guard let opened = seal.open(stored, .record, key: key) else { return nil }
            record = opened
        }
        guard record.count <= recordLimit else { return nil }
        return CacheEntry.restored(record: record, key: key)
    }

    public func remove(_ key: String) async -> Bool? {
        guard let notice = sign(SharedNotice.purge(key: key)) else { return nil }
        let reply = await link.call(Self.eval(RedisScripts.purge, keys: [entryKey(key)], [channel, notice]))
        guard case .integer(let removed) = reply else { return nil }
        return removed > 0
    }

    public func expire(_ key: String, at time: Double) async -> Bool? {
        let held: Bool
        switch await entry(for: key) {
        case .found(let entry):
            // Sent before the notice on the same connection, so Redis has stored it when the
            // other instances read the notice.
            if entry.isFresh(at: time) { store(entry.expired(at: time)) }
            held = true
        case .missing: held = false
        case .unavailable: return nil
        }
        guard let notice = sign(SharedNotice.expire(key: key)) else { return nil }
        link.send([Self.publish, channel, notice])
        return held
    }

    public func lastGroupSync() async -> SharedSyncMark {
        switch await link.call([Self.get, syncKey]) {
        case .string(var stored):
            if let seal {
                guard let opened = seal.open(stored, .record, key: Self.syncName) else {
                    refusals.withLock { $0 += 1 }
                    return .none
                }
                stored = opened
            }
            guard stored.count <= 32, let time = Double(String(decoding: stored, as: UTF8.self)), time.isFinite else {
                refusals.withLock { $0 += 1 }
                return .none
            }
            return .startedAt(time)
        case .null: return .none
        default: return .unavailable
        }
    }

    public func recordGroupSync(startedAt time: Double) {
        var value = Array(String(time).utf8)
        if let seal {
            guard let sealed = seal.seal(value, .record, key: Self.syncName) else { return }
            value = sealed
        }
        link.send([Self.set, syncKey, value])
    }

    public func lock(_ key: String) async -> SharedLock {
        let token = Array(UUID().uuidString.utf8)
        let lease = Array(String(Int(Self.lockLease * 1_000)).utf8)
        switch await link.call([Self.set, lockKey(key), token, Self.nx, Self.px, lease]) {
        case .status("OK"):
            let schedule = locks.withLock { locks -> Bool in
                locks.held[key] = token
                defer { locks.renewing = true }
                return !locks.renewing
            }
            if schedule { link.after(Self.renewInterval) { [weak self] in self?.renew() } }
            return .acquired(token: String(decoding: token, as: UTF8.self))
        case .null:
            return .held
        default:
            // No answer in time: Redis may still set it, with no one to give it back.
            locks.withLock { $0.doubtful.append((key, token)) }
            return .unavailable
        }
    }

    public func release(_ key: String, token: String, outcome: SharedFillOutcome) {
        let bytes = Array(token.utf8)
        locks.withLock { locks in
            if locks.held[key] == bytes { locks.held[key] = nil }
        }
        guard let notice = sign(SharedNotice.fill(key: key, outcome: outcome)) else { return }
        link.send(Self.eval(RedisScripts.release, keys: [lockKey(key)], [bytes, channel, notice]))
    }

    public func awaitFill(_ key: String, freshAt: Double, until deadline: Double) async -> SharedWait {
        let id = nextWaiter.withLock { next in
            next += 1
            return next
        }
        return await awaitDelivery { deliver in
            let waiter = Waiter(id: id, freshAt: freshAt, deliver: deliver)
            waiters.withLock { $0[key, default: [:]][id] = waiter }
            link.after(deadline - time.now()) { [weak self] in self?.finish(waiter, key: key, with: .nothing) }
            // A fill announced before the waiter was registered: the entry is there already.
            Task { await self.look(for: waiter, key: key, whenMissing: nil) }
        }
    }

    public func takeToken(ratePerSecond: Double, burst: Int, budget: String) async -> SharedToken {
        budgets.withLock { _ = $0.insert(budget) }
        let interval = Array(String(Int((1_000_000 / ratePerSecond).rounded())).utf8)
        let reply = await link.call(
            Self.eval(
                RedisScripts.takeToken, keys: [Array((prefix + Self.suffixed("budget", budget)).utf8)],
                [interval, Array(String(burst).utf8)]))
        guard case .integer(let wait) = reply else { return .unavailable }
        return wait <= 0 ? .granted : .wait(seconds: Double(wait) / 1_000_000)
    }

    public func announceBlock(for seconds: Double, budget: String) {
        let milliseconds = Int((seconds * 1_000).rounded(.up))
        guard milliseconds > 0, let notice = sign(SharedNotice.block(seconds: seconds, budget: budget)) else { return }
        link.send(
            Self.eval(
                RedisScripts.block, keys: [Array((prefix + Self.suffixed("breaker", budget)).utf8)],
                [Array(String(milliseconds).utf8), channel, notice]))
    }

    // MARK: Locks

    /// Extends every lock held by another lease, then schedules the next renewal while any is held.
    /// On the Redis thread.
    private func renew() {
        let held = locks.withLock { locks -> [(String, [UInt8])] in
            let held = locks.held.map { ($0.key, $0.value) }
            if held.isEmpty { locks.renewing = false }
            return held
        }
        guard !held.isEmpty else { return }
        let lease = Array(String(Int(Self.lockLease * 1_000)).utf8)
        link.send(Self.eval(RedisScripts.renew, keys: held.map { lockKey($0.0) }, [lease] + held.map(\.1)))
        link.after(Self.renewInterval) { [weak self] in self?.renew() }
    }

    /// On each (re)connection, on the Redis thread: the locks whose `SET` got no answer are given
    /// back, those held are renewed at once (a stall may have eaten their lease), and a block
    /// another instance announced while this one was away is read.
    private func linkReady() {
        let doubtful = locks.withLock { locks in
            defer { locks.doubtful = [] }
            return locks.doubtful
        }
        for (key, token) in doubtful {
            link.send(Self.eval(RedisScripts.releaseQuietly, keys: [lockKey(key)], [token]))
        }
        let held = locks.withLock { $0.held.map { ($0.key, $0.value) } }
        if !held.isEmpty {
            let lease = Array(String(Int(Self.lockLease * 1_000)).utf8)
            link.send(Self.eval(RedisScripts.renew, keys: held.map { lockKey($0.0) }, [lease] + held.map(\.1)))
        }
        readBreaker()
    }

    // MARK: Notices

    /// A payload from the channel, on the Redis thread; with a secret, only a signed one is read.
    private func received(_ payload: [UInt8]) {
        var notice = payload
        if let seal {
            guard let opened = seal.open(payload, .notice, key: "") else {
                refusals.withLock { $0 += 1 }
                return
            }
            notice = opened
        }
        switch SharedNotice(payload: notice) {
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
        case .expire(let key):
            handler.withLock { $0 }?(.expired(key: key))
        case .block(let seconds, let budget):
            handler.withLock { $0 }?(.blocked(seconds: seconds, budget: budget))
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

    /// A block another instance announced while this one was away: what is left of each
    /// breaker's life, on Redis's clock, for the API's and each budget this instance has used.
    private func readBreaker() {
        for budget in budgets.withLock({ $0 }) {
            Task {
                guard
                    case .integer(let milliseconds) = await link.call([
                        Self.pttl, Array((prefix + Self.suffixed("breaker", budget)).utf8),
                    ]),
                    milliseconds > 0
                else { return }
                handler.withLock { $0 }?(.blocked(seconds: Double(milliseconds) / 1_000, budget: budget))
            }
        }
    }

    /// A budget's or breaker's key: `name` for the API's (as before budgets had names),
    /// `name:budget` for another host's.
    static func suffixed(_ name: String, _ budget: String) -> String {
        budget.isEmpty ? name : name + ":" + budget
    }

    /// `notice`'s payload, signed when the group has a secret; nil when signing failed.
    private func sign(_ notice: SharedNotice) -> [UInt8]? {
        guard let seal else { return notice.payload }
        return seal.seal(notice.payload, .notice, key: "")
    }

    // MARK: Commands

    private func entryKey(_ key: String) -> [UInt8] { Array((prefix + "entry:" + key).utf8) }
    private func lockKey(_ key: String) -> [UInt8] { Array((prefix + "lock:" + key).utf8) }
    /// The group's sync record: `sync`, the start of its last successful sync as decimal seconds
    /// (signed as a record of that name when the group has a secret).
    private var syncKey: [UInt8] { Array((prefix + Self.syncName).utf8) }
    private static let syncName = "sync"

    private static func eval(_ script: String, keys: [[UInt8]], _ arguments: [[UInt8]]) -> [[UInt8]] {
        [Array("EVAL".utf8), Array(script.utf8), Array(String(keys.count).utf8)] + keys + arguments
    }

    private static let get = Array("GET".utf8)
    private static let set = Array("SET".utf8)
    private static let publish = Array("PUBLISH".utf8)
    private static let px = Array("PX".utf8)
    private static let nx = Array("NX".utf8)
    private static let pttl = Array("PTTL".utf8)
}
