import CSQLite
import Foundation
import MetEngine
import Synchronization

/// The persistent tier: entries in an SQLite database in WAL mode (`cache.sqlite` in the data
/// directory), bounded in bytes with least-recently-used eviction.
///
/// Reads run on the caller's thread, each on a connection of a small pool, so concurrent reads
/// never wait for each other, nor, in WAL mode, for the writer. A loop thread reads
/// (`entryAtOnce`) while the page cache holds what it reads: a read that had to wait for the
/// device (the thread's `ru_inblock` grew) stops loop reads for `coldPause`, and tasks read
/// meanwhile (warming the page cache), so a cold disk stalls a loop for at most one read a
/// second. Time alone would not tell: on a busy machine a loop thread is descheduled for
/// milliseconds in the middle of a read that never left memory. Writes,
/// removals and the use marks of reads go to one `DiskWriter`, which commits them in batches on a
/// thread of its own. Every row carries its record's checksum: a damaged row is a miss, counted,
/// logged and removed, never an answer. Any thread.
public final class DiskCache: PersistentTier {
    private let path: String
    private let capacity: Int
    private let logger: Logger
    private let writer: DiskWriter
    /// The search index's facts in memory, shared by the writer and the searches.
    private let facts = SearchFacts()
    /// Local searches worked out, for their next pages and repeats.
    private let searchResults = SearchResultCache()
    /// Reader connections not in use; a read takes one, or opens one when none is free.
    private let idleReaders = Locked<[Reader]>([])
    /// Reader connections for local search, with a page cache of their own (`searchCacheKiB`).
    private let idleSearchers = Locked<[Reader]>([])
    /// The page cache of a search's connection, in KiB: the index's pages a word reads (its
    /// doclists, by word and column) stay in it from one search to the next.
    static let searchCacheKiB = 16_384
    /// Reads counted, and whether `close()` has run: atomics, as both loop threads read on every
    /// disk hit (locks there made the loops wait for each other).
    private let hits = Atomic<Int>(0)
    private let misses = Atomic<Int>(0)
    private let corrupt = Atomic<Int>(0)
    private let errors = Atomic<Int>(0)
    private let closed = Atomic<Bool>(false)
    /// Until when loop threads do not read (`DispatchTime` uptime, nanoseconds); 0 when they may.
    private let loopReadsPausedUntil = Atomic<UInt64>(0)
    /// Keys a loop read found no row for, with when (uptime, nanoseconds): the task that fetches
    /// such a key next (`entry(for:)`, within `absenceLifetime`) takes the absence instead of
    /// asking SQLite again; a miss was read twice, 6 % of a fill's CPU. A store or removal of the
    /// key forgets it, so what this process stores is never missed; a row another process writes
    /// in between costs a fetch, never a wrong answer. At most `absenceBound`, then forgotten all.
    private let absences = Locked<[String: UInt64]>([:])
    static let absenceLifetime: UInt64 = 1_000_000_000
    private static let absenceBound = 4_096
    /// How long a loop read that waited for the disk stops loop reads, in nanoseconds.
    static let coldPause: UInt64 = 1_000_000_000

    /// A reader connection and its prepared statements.
    private final class Reader: @unchecked Sendable {
        let connection: SQLiteConnection
        let select: SQLiteStatement
        let exists: SQLiteStatement

        /// - Parameter cacheKiB: the connection's page cache. Record reads take 256 KiB, not
        ///   SQLite's 2 MiB: the B-trees' inner pages fit, and the rows of a spread are read once
        ///   from the kernel's page cache (which the writer's commits make SQLite drop anyway).
        ///   4-5 MiB less RSS over a disk-hit run, the same CPU.
        init(path: String, cacheKiB: Int = 256) throws(SQLiteError) {
            connection = try SQLiteConnection(path: path, create: false)
            try CacheDatabase.configure(connection)
            try connection.execute("PRAGMA query_only = 1")
            try connection.execute("PRAGMA cache_size = -\(cacheKiB)")
            select = try connection.prepare("SELECT record, used_at FROM entries WHERE key = ?1")
            exists = try connection.prepare("SELECT 1 FROM entries WHERE key = ?1")
        }
    }

    /// Opens (or creates) `cache.sqlite` in `directory`, bounded by `capacity` bytes of rows. A
    /// damaged or foreign file is moved aside and a new one made; when no database can be opened
    /// (a read-only file, a full disk, …) this logs why and returns nil, and the server runs on
    /// memory and the upstream. Start-up reads no rows: the writer counts them in the background.
    /// The change log keeps the newest `changeRetention` changes.
    public static func open(
        directory: String, capacity: Int, changeRetention: Int = DiskCache.changeRetention, logger: Logger
    ) -> DiskCache? {
        let path = directory + "/" + CacheDatabase.entries.fileName
        do {
            let connection = try CacheDatabase.entries.open(path, logger: logger)
            return try DiskCache(
                path: path, connection: connection, capacity: capacity, changeRetention: changeRetention,
                logger: logger)
        } catch {
            logger.warning("persistent cache off: cannot use \(path): \(error); serving from memory and the upstream")
            return nil
        }
    }

    /// How many changes the change log keeps (`GET /changes`): about 6 MiB of rows.
    public static let changeRetention = 100_000

    private init(
        path: String, connection: SQLiteConnection, capacity: Int, changeRetention: Int, logger: Logger
    ) throws {
        self.path = path
        self.capacity = capacity
        self.logger = logger
        writer = try DiskWriter(
            connection: connection, capacity: capacity, changeRetention: changeRetention, facts: facts, logger: logger)
    }

    public func entry(for key: String) -> CacheEntry? {
        if writer.queued(key) == nil, let noted = absences.withLock({ $0.removeValue(forKey: key) }),
            DispatchTime.now().uptimeNanoseconds - noted < Self.absenceLifetime
        {
            misses.add(1, ordering: .relaxed)
            return nil
        }
        return read(key, countingMisses: true).entry
    }

    public func entryAtOnce(for key: String) -> AtOnceRead {
        let now = DispatchTime.now().uptimeNanoseconds
        guard now >= loopReadsPausedUntil.load(ordering: .relaxed) else { return .declined }
        let before = Self.blocksRead()
        let (entry, absent) = read(key, countingMisses: false)
        if Self.blocksRead() != before {
            loopReadsPausedUntil.store(DispatchTime.now().uptimeNanoseconds + Self.coldPause, ordering: .relaxed)
            logger.debug("\(path): reading \(key) waited for the disk; reading in tasks for a second")
        }
        if absent {
            absences.withLock { noted in
                if noted.count >= Self.absenceBound { noted.removeAll(keepingCapacity: true) }
                noted[key] = now
            }
        }
        return entry.map(AtOnceRead.found) ?? .absent
    }

    /// The blocks the calling thread has read from a device (`ru_inblock`): a read that the page
    /// cache answers leaves it as it was; one that had to wait for the disk raises it.
    private static func blocksRead() -> Int {
        var usage = rusage()
        // RUSAGE_THREAD (1): Glibc declares it only under _GNU_SOURCE, which Swift does not set.
        getrusage(__rusage_who_t(1), &usage)
        return usage.ru_inblock
    }

    /// The entry stored for `key` (see `entry(for:)`), and whether SQLite holds no row for it (a
    /// miss, counted only when `countingMisses`; not a damaged row, nor a failed read).
    private func read(_ key: String, countingMisses: Bool) -> (entry: CacheEntry?, absent: Bool) {
        guard !closed.load(ordering: .acquiring) else { return (nil, false) }
        if let queued = writer.queued(key) { return (queued, false) }
        let row: (entry: CacheEntry?, usedAt: Int64)?
        do {
            // The record is restored where SQLite holds it, before the statement is reset.
            row = try withReader { reader throws(SQLiteError) -> (CacheEntry?, Int64)? in
                try reader.select.bind(.text(key))
                defer { reader.select.reset() }
                guard try reader.select.step() else { return nil }
                let entry = reader.select.withBlob(at: 0) { CacheEntry.restored(record: $0, key: key) }
                return (entry, reader.select.integer(at: 1))
            }
        } catch {
            errors.add(1, ordering: .relaxed)
            if error.meansUnusableFile {
                corrupt.add(1, ordering: .relaxed)
                logger.warning("\(path): the page holding \(key) is damaged (\(error)); treated as a miss")
            } else {
                logger.warning("\(path): cannot read \(key): \(error); treated as a miss")
            }
            return (nil, false)
        }
        guard let row else {
            if countingMisses { misses.add(1, ordering: .relaxed) }
            return (nil, true)
        }
        guard let entry = row.entry else {
            corrupt.add(1, ordering: .relaxed)
            logger.warning("\(path): the row of \(key) is damaged (checksum or format); treated as a miss and removed")
            writer.remove(key)
            return (nil, false)
        }
        hits.add(1, ordering: .relaxed)
        writer.markUsed(key, usedAt: row.usedAt)
        return (entry, false)
    }

    public func store(_ entry: CacheEntry) {
        forgetAbsence(of: entry.key)
        writer.store(entry)
    }

    private func forgetAbsence(of key: String) {
        absences.withLock { noted in _ = noted.removeValue(forKey: key) }
    }

    public func remove(_ key: String) -> Bool {
        guard !closed.load(ordering: .acquiring) else { return false }
        let existed: Bool
        if let queued = writer.queued(key) {
            existed = queued != nil
        } else {
            existed =
                (try? withReader { reader throws(SQLiteError) -> Bool in
                    try reader.exists.bind(.text(key))
                    defer { reader.exists.reset() }
                    return try reader.exists.step()
                }) ?? false
        }
        forgetAbsence(of: key)
        writer.remove(key)
        return existed
    }

    /// Writes everything queued and waits until it is on the disk.
    public func flush() { writer.flush() }

    /// What is committed now, as `CacheSnapshot.export` writes it (what is still queued is not in
    /// it: it reaches the disk within the writer's batch window).
    public func writeSnapshot(
        to file: String, createdBy: String, syncStartedAt: Double?, pictures: Bool, at now: Double
    ) throws -> (records: Int, pictures: Int) {
        let directory = String(path.dropLast(CacheDatabase.entries.fileName.count + 1))
        let manifest = try CacheSnapshot.export(
            directory: directory, to: file, createdBy: createdBy, at: now, syncStartedAt: syncStartedAt,
            pictures: pictures, progress: { _, _ in })
        return (manifest.records, manifest.pictures?.records ?? 0)
    }

    public func changes(from start: ChangeStart, limit: Int) throws -> ChangePage? {
        guard !closed.load(ordering: .acquiring) else { return nil }
        return try withReader { reader throws(SQLiteError) in
            try ChangeLog.page(on: reader.connection, from: start, limit: limit)
        }
    }

    public func search(_ search: LocalSearch) throws -> LocalSearchPage? {
        guard !closed.load(ordering: .acquiring) else { return nil }
        let idle = idleSearchers.withLock { $0.popLast() }
        let searcher = try idle ?? Reader(path: path, cacheKiB: Self.searchCacheKiB)
        defer { idleSearchers.withLock { $0.append(searcher) } }
        return try SearchIndexQuery(search).run(on: searcher.connection, facts: facts, results: searchResults)
    }

    /// Empties the search index and builds it again from every object record stored, between
    /// the writer's batches (`themet reindex`); returns when it is built. `progress` is told the
    /// rows read so far, every `interval` seconds. Blocks: a command's thread, never a loop's.
    public func rebuildSearchIndex(interval: Double = 0.2, progress: (Int) -> Void) throws {
        try writer.rebuildIndex(interval: interval, progress: progress)
    }

    /// Waits until the search index holds every record stored, when it is being built (the file
    /// came from a build without it). Blocks.
    public func waitForSearchIndex() { writer.waitForIndexBuild() }

    /// How many object records the tier holds (what `rebuildSearchIndex` reads). Blocks.
    public func objectRecordCount() throws -> Int {
        try withReader { reader throws(SQLiteError) in
            let count = try reader.connection.prepare("SELECT count(*) FROM entries WHERE key GLOB ?1")
            try count.bind(.text(SearchIndex.objectKeyPattern))
            defer { count.reset() }
            return try count.step() ? Int(count.integer(at: 0)) : 0
        }
    }

    /// Writes everything queued, then closes the database (at shutdown, and before a one-shot
    /// command exits); reads after it miss and writes are ignored.
    public func close() {
        closed.store(true, ordering: .releasing)
        writer.close()
        idleReaders.withLock { $0 = [] }
        idleSearchers.withLock { $0 = [] }
    }

    public var statistics: PersistentTierStatistics {
        var figures = writer.statistics
        figures.location = path
        figures.capacity = capacity
        figures.hits = hits.load(ordering: .relaxed)
        figures.misses = misses.load(ordering: .relaxed)
        figures.corrupt = corrupt.load(ordering: .relaxed)
        figures.readErrors = errors.load(ordering: .relaxed)
        return figures
    }

    /// Runs `body` with a reader connection of its own, then returns the connection to the pool.
    private func withReader<Result>(_ body: (Reader) throws(SQLiteError) -> Result) throws(SQLiteError) -> Result {
        let idle = idleReaders.withLock { $0.popLast() }
        let reader: Reader
        if let idle { reader = idle } else { reader = try Reader(path: path) }
        defer { idleReaders.withLock { $0.append(reader) } }
        return try body(reader)
    }
}
