/// The tier several instances share (Redis, in a target of its own): entries any instance fetched,
/// the cross-instance single flight, purges told to every instance, the group's upstream budget
/// and its breaker. Everything here is optional help: when the tier is down or slow, each call
/// answers `unavailable` within the tier's timeout, and the caller carries on with its local
/// tiers, its local single flight and its local pacing.
///
/// Calls are made from tasks, never a loop thread (but `entrySoon`, which does not block); none
/// waits longer than the tier's timeout,
/// except `awaitFill(_:until:)`, which waits until the time it is given. Any thread.
public protocol SharedTier: Sendable {
    /// The entry the group holds for `key`, fresh or not.
    func entry(for key: String) async -> SharedLookup

    /// `entry(for:)` without a task: `then` is told the lookup once, within the tier's timeout, on
    /// the tier's own thread (or the caller's, if the tier answers at once). Any thread, loop
    /// threads included; never blocks.
    func entrySoon(for key: String, then: @escaping @Sendable (SharedLookup) -> Void)

    /// Stores `entry` for the group until its stale-until time; returns at once (a failure only
    /// costs the other instances a fetch).
    func store(_ entry: CacheEntry)

    /// Removes `key` from the group and tells every other instance to drop its own copies (the
    /// `onEvent` handler there gets `.purged`). Returns whether the group held it; nil when the
    /// tier is unavailable.
    func remove(_ key: String) async -> Bool?

    /// Marks the group's copy of `key` expired at `time` (seconds since 1970) when it is fresh,
    /// its stale windows kept (`CacheEntry.expired(at:)`), and tells every other instance to do the
    /// same to its own copies (the `onEvent` handler there gets `.expired`; this instance's gets it
    /// too). Returns whether the group held a copy; nil when the tier is unavailable (the other
    /// instances are then not told).
    func expire(_ key: String, at time: Double) async -> Bool?

    /// Tries to become the one instance that fetches `key`. The lock lasts while its holder lives
    /// and answers (the tier renews it) until `release`; a holder that dies or falls silent loses it
    /// within the tier's lease (seconds), so that it costs the others one short wait, never a hang.
    /// A lock asked for when the tier did not answer in time may still have been set: the tier
    /// gives it back once it answers again.
    func lock(_ key: String) async -> SharedLock

    /// Gives back a lock taken by `lock(_:)` (only if it is still this holder's), and tells
    /// the instances waiting in `awaitFill` how the fetch ended. Returns at once.
    func release(_ key: String, token: String, outcome: SharedFillOutcome)

    /// Waits until the lock holder for `key` announces its fill, or `deadline` (seconds since
    /// 1970), and then reads the entry, which counts when it is fresh at `freshAt`. A fill
    /// announced just before the call is not lost: the entry is also read once the wait begins.
    func awaitFill(_ key: String, freshAt: Double, until deadline: Double) async -> SharedWait

    /// Takes one token of the group's budget named `budget` (one per upstream host: "" for the
    /// API): `ratePerSecond` on average, `burst` at once, on one clock for the whole group (GCRA).
    func takeToken(ratePerSecond: Double, burst: Int, budget: String) async -> SharedToken

    /// Opens the group's breaker of the host whose budget is `budget` for `seconds` from now:
    /// every instance's `onEvent` gets `.blocked`, and so do instances that connect while it lasts
    /// (for the budgets they have taken tokens of). A duration, not a time, so that the instances'
    /// clocks do not matter. Returns at once.
    func announceBlock(for seconds: Double, budget: String)

    /// When the group's last successful `metadataDate` sync started, as recorded by
    /// `recordGroupSync(startedAt:)` (any instance's).
    func lastGroupSync() async -> SharedSyncMark

    /// Records that a `metadataDate` sync of the group, started at `time` (seconds since 1970),
    /// succeeded; kept until replaced. Returns at once.
    func recordGroupSync(startedAt time: Double)

    /// Sets the one handler of what other instances announce (purges and blocks). Call once,
    /// before the first request; the handler runs on the tier's thread and must not block.
    func onEvent(_ handler: @escaping @Sendable (SharedEvent) -> Void)

    /// The tier's state, for `/health` and `/metrics`.
    var status: SharedTierStatus { get }
}

/// What `SharedTier.entry(for:)` found.
public enum SharedLookup: Sendable {
    case found(CacheEntry)
    /// The group holds no entry for the key (or a damaged one, which then counts as none).
    case missing
    /// The tier is down or did not answer in time.
    case unavailable
}

/// What `SharedTier.lock(_:)` got.
public enum SharedLock: Sendable, Equatable {
    /// This instance fetches; release with this token.
    case acquired(token: String)
    /// Another instance holds the lock and is fetching.
    case held
    case unavailable
}

/// How a lock holder's fetch ended, as told to the instances waiting for it.
public enum SharedFillOutcome: Sendable, Equatable {
    /// The entry is in the tier.
    case stored
    /// The fetch failed; the waiters fail the same way instead of each asking again.
    case failed(UpstreamError)
    /// Nothing was stored and nothing failed (the holder was cancelled); a waiter takes the lock.
    case abandoned
}

/// What `SharedTier.awaitFill(_:until:)` saw.
public enum SharedWait: Sendable {
    /// The entry is there (announced or found).
    case found(CacheEntry)
    /// The holder announced a failure.
    case failed(UpstreamError)
    /// No entry by the deadline, or the holder gave up: try the lock again.
    case nothing
    case unavailable
}

/// What `SharedTier.takeToken(ratePerSecond:burst:budget:)` got.
public enum SharedToken: Sendable, Equatable {
    case granted
    /// No token for this many seconds; ask again then.
    case wait(seconds: Double)
    case unavailable
}

/// What `SharedTier.lastGroupSync()` found.
public enum SharedSyncMark: Sendable, Equatable {
    /// The group's last successful sync started then (seconds since 1970).
    case startedAt(Double)
    /// No instance of the group has recorded a sync (or the record was refused).
    case none
    case unavailable
}

/// What another instance announced.
public enum SharedEvent: Sendable, Equatable {
    /// `key` was purged: drop the local copies.
    case purged(key: String)
    /// `key` was purged softly, or changed at the Met: mark the local copies expired (they still
    /// stand in while the upstream cannot answer).
    case expired(key: String)
    /// The firewall of the host whose budget is `budget` ("" for the API) blocked the group for
    /// this many seconds from the notice's arrival (told by another instance; the receiver caps it
    /// at its longest cool-down).
    case blocked(seconds: Double, budget: String)
}

/// The shared tier's state, for `/health` and `/metrics`.
public struct SharedTierStatus: Sendable, Equatable {
    /// Where the tier is (a URL without its password).
    public var location: String
    /// Connected and answering.
    public var connected: Bool
    /// The latest measured round trip, in seconds; nil before the first.
    public var roundTrip: Double?
    /// Calls that found the tier down or got no answer in time, since start-up.
    public var unavailable: Int
    /// Times the connection was lost, since start-up.
    public var disconnects: Int
    /// Why the tier is down, when it is.
    public var lastError: String?
    /// Whether what the group writes is signed with its secret (`--redis-secret`); false: records
    /// carry a checksum only, and the group trusts whoever can write to the tier.
    public var signed = false
    /// Records and notices read and refused since start-up: a signature that does not verify, a
    /// record stored under another key than its own, damage, or another version's format.
    public var refused = 0

    public init(
        location: String, connected: Bool, roundTrip: Double?, unavailable: Int, disconnects: Int,
        lastError: String?, signed: Bool = false, refused: Int = 0
    ) {
        self.location = location
        self.connected = connected
        self.roundTrip = roundTrip
        self.unavailable = unavailable
        self.disconnects = disconnects
        self.lastError = lastError
        self.signed = signed
        self.refused = refused
    }
}
