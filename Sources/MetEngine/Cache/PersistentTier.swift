/// A tier under memory that keeps entries across restarts (the SQLite tier, in a target of its
/// own). The resolver reads it on a memory miss and writes every entry fetched from the upstream
/// through it.
///
/// Reads block their caller for microseconds (a row lookup) and are made from tasks, and from a
/// loop thread only through `entryAtOnce(for:)`, which declines while reads are slow. Writes and
/// removals are queued for a writer of the tier's own and return at once; a read made after a
/// write sees it, even before it reaches the disk.
public protocol PersistentTier: Sendable {
    /// The entry stored for `key`, fresh or not; nil when there is none or its row is damaged
    /// (counted, and then a miss).
    func entry(for key: String) -> CacheEntry?

    /// `entry(for:)` made on a loop thread, so that a hit needs no task: `.declined` without
    /// reading while the tier's reads have lately been slow (the page cache does not hold its file,
    /// the disk is busy), and a miss (`.absent`) is not counted (the caller goes on in a task,
    /// whose `entry(for:)` counts it, and may take that absence instead of reading again). A tier
    /// that cannot read without blocking declines.
    func entryAtOnce(for key: String) -> AtOnceRead

    /// Queues `entry` to be stored, replacing any entry with its key.
    func store(_ entry: CacheEntry)

    /// Removes the entry stored for `key` (a purge), and returns whether there was one; later
    /// reads miss it at once. Looks the row up, so it blocks like a read: tasks only.
    func remove(_ key: String) -> Bool

    /// What the tier holds and has done, for `/health`.
    var statistics: PersistentTierStatistics { get }

    /// Writes a snapshot of what the tier holds to `file`, a new file (`themet export`'s format),
    /// naming `createdBy` as its maker and `syncStartedAt` as the last sync, with the pictures
    /// kept in files beside the tier (the same data directory's) when `pictures`; returns how
    /// many records and pictures it holds. Blocks for as long as copying takes (seconds for a
    /// large tier, more with pictures): on a thread of its own, never a loop's or the task
    /// pool's. Throws why it could not be made.
    func writeSnapshot(
        to file: String, createdBy: String, syncStartedAt: Double?, pictures: Bool, at now: Double
    ) throws -> (records: Int, pictures: Int)

    /// At most `limit` changes of the tier's change log from `start` (see `ObjectChange`), or nil
    /// when the tier keeps no log. Committed changes only (a store still queued is listed once its
    /// batch is written). Reads like `entry(for:)`: tasks only. Throws when the log cannot be read.
    func changes(from start: ChangeStart, limit: Int) throws -> ChangePage?

    /// The page of `search` over the records the tier holds (see `LocalSearch`), or nil when the
    /// tier keeps no search index. Committed records only, as for `changes`. Reads for a few
    /// milliseconds: tasks only. Throws when the index cannot be read.
    func search(_ search: LocalSearch) throws -> LocalSearchPage?
}

extension PersistentTier {
    /// Declined: a tier reads in tasks only unless it says how long its reads take.
    public func entryAtOnce(for key: String) -> AtOnceRead { .declined }

    /// Refused: a tier makes snapshots only when it says how.
    public func writeSnapshot(
        to file: String, createdBy: String, syncStartedAt: Double?, pictures: Bool, at now: Double
    ) throws -> (records: Int, pictures: Int) {
        throw SnapshotUnsupported()
    }
}

extension PersistentTier {
    /// None: a tier keeps a change log only when it says how.
    public func changes(from start: ChangeStart, limit: Int) throws -> ChangePage? { nil }

    /// None: a tier searches what it holds only when it says how.
    public func search(_ search: LocalSearch) throws -> LocalSearchPage? { nil }
}

/// A persistent tier that cannot make snapshots.
public struct SnapshotUnsupported: Error, CustomStringConvertible {
    public var description: String { "this persistent tier makes no snapshots" }
}

/// What a read on a loop thread found (`PersistentTier.entryAtOnce(for:)`).
public enum AtOnceRead: Sendable {
    /// The entry stored for the key, fresh or not.
    case found(CacheEntry)
    /// Read: no entry (or a damaged row, then removed).
    case absent
    /// Not read: the caller reads in a task.
    case declined

    /// The entry found, if any.
    public var entry: CacheEntry? {
        guard case .found(let entry) = self else { return nil }
        return entry
    }
}

/// Figures about the persistent tier, for `/health`.
public struct PersistentTierStatistics: Sendable, Equatable {
    /// Where the tier keeps its entries (a file path).
    public var location = ""
    /// Entries stored, and the bytes of their rows; nil until counted after start-up (in the
    /// background, so that start-up does not read the whole database).
    public var entries: Int?
    public var bytes: Int?
    /// The bound on `bytes`.
    public var capacity = 0
    /// Reads that found an entry, found none, or found a damaged row (then a miss).
    public var hits = 0
    public var misses = 0
    public var corrupt = 0
    /// Entries written.
    public var writes = 0
    /// Reads that failed (I/O errors, a damaged page), and batches or stores that could not be
    /// written (disk full, I/O errors, another process holding the lock too long, a writer far
    /// behind).
    public var readErrors = 0
    public var writeErrors = 0
    /// Entries dropped to stay within `capacity`.
    public var evictions = 0
    /// Keys whose latest store or removal is not yet committed to the disk.
    public var queued = 0

    public init() {}
}
