import CSQLite
import Foundation
import MetEngine

/// The persistent tier's one writer: a thread of its own that commits queued stores, removals and
/// the use marks of reads in batches, one transaction each, and evicts the least recently used
/// rows past the bound.
///
/// A use mark is a row's `used_at` set to the next number of a sequence that every store and mark
/// advances; eviction takes the smallest. A read marks its row only when the row's mark is in the
/// older half of the sequence's span over the table (`markUsed`): a row in the newer half is as
/// safe from eviction as half the table, so marking it again would only rewrite its pages. Reads of
/// a working set therefore write nothing once its rows are marked, and a row read again and again
/// costs one write per half turn of the sequence, not one per batch.
///
/// A store waits at most `batchWindow` (50 ms) plus the time of the transactions before it in the
/// queue before it is committed; a committed batch survives `kill -9` (WAL, `synchronous =
/// NORMAL`), so a crash loses at most the batch being gathered. Until then a read finds the queued
/// entry here (`queued(_:)`). When the queue holds `maxQueued` operations, further stores are
/// dropped (counted as errors): memory keeps them, and the disk is behind anyway.
final class DiskWriter: @unchecked Sendable {
    /// How long the writer gathers operations before committing them, in seconds.
    static let batchWindow = 0.05
    /// Operations that start a commit at once, without waiting out the window.
    static let batchLimit = 512
    /// The most operations queued; see the type's comment.
    static let maxQueued = 20_000
    /// Past the bound, eviction removes rows until this fraction of it is left, so that it does
    /// not run again at every batch.
    static let evictionTarget = 0.9

    private enum Operation {
        case store(CacheEntry)
        case remove
    }

    private struct Queued {
        let sequence: UInt64
        let key: String
        let operation: Operation
    }

    /// Everything the writer thread and its callers share, guarded by `condition`.
    private struct State {
        var queue: [Queued] = []
        /// For each key with a queued operation, the latest: its sequence number and the entry
        /// (nil for a removal).
        var pending: [String: (sequence: UInt64, entry: CacheEntry?)] = [:]
        /// Keys read since the last commit, whose use is marked in the next.
        var used = Set<String>()
        /// The sequence's bounds after the last commit: no row's mark is below `oldestUse` (counted
        /// at start-up, raised by eviction) or above `newestUse`.
        var oldestUse: Int64 = 0
        var newestUse: Int64 = 0
        var nextSequence: UInt64 = 0
        var writing = false
        var flushers = 0
        /// Set by `close()`: the thread commits what is queued, then ends (`finished`).
        var closing = false
        var finished = false
        /// Counted by the writer in the background at start-up.
        var entries: Int?
        var bytes: Int?
        var writes = 0
        var errors = 0
        var evictions = 0
        var droppedSinceLog = 0
        /// Whether the search index is being built from the rows already stored (`SearchIndex`),
        /// a step between batches.
        var buildingIndex = false
        /// Set by `rebuildIndex`: the writer empties the index and builds it again.
        var restartingIndex = false
        /// Rows the build has read since it started, and why it stopped short (nil: it did not).
        var indexRowsRead = 0
        var indexFailure: SQLiteError?
    }

    private let condition = NSCondition()
    private var state = State()
    private let capacity: Int
    private let logger: Logger
    /// The writer thread's own from here on: the connection, its statements, the use counter.
    private let connection: SQLiteConnection
    private let selectRow: SQLiteStatement
    private let selectRecord: SQLiteStatement
    private let upsert: SQLiteStatement
    private let delete: SQLiteStatement
    private let touch: SQLiteStatement
    private let oldest: SQLiteStatement
    private let changeLog: ChangeLog
    private let searchIndex: SearchIndex
    private var useSequence: Int64 = 0
    private var lastErrorLog = Date.distantPast

    /// Starts the writer thread on `connection` (which it owns from now on), keeping the newest
    /// `changeRetention` changes of the change log.
    init(
        connection: SQLiteConnection, capacity: Int, changeRetention: Int, facts: SearchFacts, logger: Logger
    ) throws(SQLiteError) {
        self.connection = connection
        self.capacity = capacity
        self.logger = logger
        selectRow = try connection.prepare("SELECT bytes, etag FROM entries WHERE key = ?1")
        selectRecord = try connection.prepare("SELECT record FROM entries WHERE key = ?1")
        upsert = try connection.prepare(
            """
            INSERT INTO entries (key, bytes, used_at, record, etag) VALUES (?1, ?2, ?3, ?4, ?5)
            ON CONFLICT (key) DO UPDATE SET bytes = excluded.bytes, used_at = excluded.used_at, record = excluded.record,
                etag = excluded.etag
            """)
        delete = try connection.prepare("DELETE FROM entries WHERE key = ?1")
        touch = try connection.prepare("UPDATE entries SET used_at = ?2 WHERE key = ?1")
        oldest = try connection.prepare("SELECT key, bytes, used_at FROM entries ORDER BY used_at LIMIT ?1")
        changeLog = try ChangeLog(connection: connection, retention: changeRetention)
        searchIndex = try SearchIndex(connection: connection, facts: facts)
        state.buildingIndex = try searchIndex.isBuilding()
        let thread = Thread { [self] in run() }
        thread.name = "themet-disk-writer"
        thread.start()
    }

    /// Queues `entry` to be stored. Any thread; never waits for the disk.
    func store(_ entry: CacheEntry) { enqueue(entry.key, .store(entry)) }

    /// Queues the removal of `key`'s row. Any thread.
    func remove(_ key: String) { enqueue(key, .remove) }

    /// Marks `key`, whose row's mark was `usedAt` when read, as used now, for eviction order
    /// (committed with the next batch), unless that mark is in the newer half (see the type's
    /// comment). Any thread.
    func markUsed(_ key: String, usedAt: Int64) {
        condition.lock()
        defer { condition.unlock() }
        guard usedAt < state.oldestUse + (state.newestUse - state.oldestUse) / 2 else { return }
        guard state.used.count < Self.maxQueued else { return }
        if state.queue.isEmpty && state.used.isEmpty { condition.broadcast() }
        state.used.insert(key)
    }

    /// The latest queued operation of `key`, not yet committed: `.some(entry)` for a store,
    /// `.some(nil)` for a removal, nil when none is queued. Any thread.
    func queued(_ key: String) -> CacheEntry?? {
        condition.lock()
        defer { condition.unlock() }
        return state.pending[key].map { $0.entry }
    }

    /// Commits everything queued now, and waits until it is on the disk. Any thread but the writer's.
    func flush() {
        condition.lock()
        state.flushers += 1
        condition.broadcast()
        while !state.queue.isEmpty || !state.used.isEmpty || state.writing { condition.wait() }
        state.flushers -= 1
        condition.unlock()
    }

    /// Commits everything queued, moves the WAL's pages into the database file, ends the writer
    /// thread and waits for it; later operations are ignored. Any thread but the writer's.
    func close() {
        condition.lock()
        state.closing = true
        condition.broadcast()
        while !state.finished { condition.wait() }
        condition.unlock()
    }

    /// The writer's figures (counts, bytes, queue length); the reads are the tier's.
    var statistics: PersistentTierStatistics {
        condition.lock()
        defer { condition.unlock() }
        var figures = PersistentTierStatistics()
        figures.entries = state.entries
        figures.bytes = state.bytes
        figures.writes = state.writes
        figures.writeErrors = state.errors
        figures.evictions = state.evictions
        figures.queued = state.pending.count
        return figures
    }

    private func enqueue(_ key: String, _ operation: Operation) {
        condition.lock()
        defer { condition.unlock() }
        guard !state.closing else { return }
        if case .store = operation, state.queue.count >= Self.maxQueued {
            state.errors += 1
            state.droppedSinceLog += 1
            return
        }
        state.nextSequence += 1
        let entry: CacheEntry? = if case .store(let entry) = operation { entry } else { nil }
        state.pending[key] = (state.nextSequence, entry)
        state.queue.append(Queued(sequence: state.nextSequence, key: key, operation: operation))
        if state.queue.count == 1 || state.queue.count == Self.batchLimit { condition.broadcast() }
    }

    /// The writer thread: counts the rows, then commits batches until `close()`, and builds the
    /// search index a step at a time between them while a build is under way.
    private func run() {
        countRows()
        while true {
            condition.lock()
            let restarting = state.restartingIndex && !state.closing
            let building = state.buildingIndex && !state.closing
            condition.unlock()
            if restarting { restartIndex() } else if building { buildIndexStep() }
            condition.lock()
            while state.queue.isEmpty && state.used.isEmpty && !state.closing && !state.buildingIndex
                && !state.restartingIndex
            {
                condition.wait()
            }
            if state.queue.isEmpty && state.used.isEmpty && !state.closing {
                condition.unlock()
                continue  // Only the build has work.
            }
            let deadline = Date(timeIntervalSinceNow: Self.batchWindow)
            while state.flushers == 0 && !state.closing && state.queue.count < Self.batchLimit
                && condition.wait(until: deadline)
            {}
            if state.closing && state.queue.isEmpty && state.used.isEmpty {
                condition.unlock()
                // Everything into the main file, so that it alone holds the cache (and a copy of it
                // is whole); a failure only leaves the WAL for the next start to replay.
                try? connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
                condition.lock()
                state.finished = true
                condition.broadcast()
                condition.unlock()
                return
            }
            let batch = state.queue
            let used = state.used
            let dropped = state.droppedSinceLog
            state.queue = []
            state.used = []
            state.droppedSinceLog = 0
            state.writing = true
            condition.unlock()

            if dropped > 0 { logger.warning("persistent cache: \(dropped) store(s) dropped, the writer is behind") }
            let outcome = commit(batch, used: used)

            condition.lock()
            for item in batch where state.pending[item.key]?.sequence == item.sequence {
                state.pending[item.key] = nil
            }
            switch outcome {
            case .success(let change):
                state.oldestUse = max(state.oldestUse, change.oldestUse)
                state.newestUse = useSequence
                state.entries = state.entries.map { $0 + change.entries }
                state.bytes = state.bytes.map { $0 + change.bytes }
                state.writes += change.writes
                state.evictions += change.evictions
            case .failure:
                state.errors += 1
            }
            state.writing = false
            condition.broadcast()
            condition.unlock()
        }
    }

    /// What one committed batch changed.
    private struct Change {
        var entries = 0
        var bytes = 0
        var writes = 0
        var evictions = 0
        /// The mark of the last row evicted (no row left has a smaller one); 0 when none was.
        var oldestUse: Int64 = 0
    }

    /// Commits `batch`, the changes it makes to the change log and the use marks of `used` in one
    /// transaction, then evicts past the bound; on a failure rolls back (the batch is lost to the
    /// disk; memory still holds its entries).
    private func commit(_ batch: [Queued], used: Set<String>) -> Result<Change, SQLiteError> {
        var change = Change()
        var noted = false
        do {
            try connection.execute("BEGIN IMMEDIATE")
            for item in batch {
                // Only an object's store is compared with the row it replaces (the change log).
                let isObjectStore = if case .store(let entry) = item.operation { entry.kind == .object } else { false }
                let old = try row(item.key, version: isObjectStore)
                switch item.operation {
                case .store(let entry):
                    let record = entry.record
                    let bytes = record.count + item.key.utf8.count
                    useSequence += 1
                    try upsert.bind(
                        .text(item.key), .integer(Int64(bytes)), .integer(useSequence), .blob(record),
                        .text(ChangeLog.version(of: entry)))
                    try upsert.step()
                    change.entries += old == nil ? 1 : 0
                    change.bytes += bytes - (old?.bytes ?? 0)
                    change.writes += 1
                    if try changeLog.note(entry, replacing: old?.version) { noted = true }
                    try searchIndex.note(entry, replacing: old?.version)
                case .remove:
                    guard let old else { continue }
                    try delete.bind(.text(item.key))
                    try delete.step()
                    try searchIndex.removed(item.key)
                    change.entries -= 1
                    change.bytes -= old.bytes
                }
            }
            for key in used {
                useSequence += 1
                try touch.bind(.text(key), .integer(useSequence))
                try touch.step()
            }
            if noted { try changeLog.pruneIfDue() }
            try evict(&change)
            let indexed = try searchIndex.finishTransaction()
            try connection.execute("COMMIT")
            indexed?()
            return .success(change)
        } catch {
            try? connection.execute("ROLLBACK")
            searchIndex.discardTransaction()
            if Date().timeIntervalSince(lastErrorLog) >= 60 {
                lastErrorLog = Date()
                logger.warning(
                    "persistent cache: cannot write \(batch.count) entr(y/ies): \(error); they stay in memory only "
                        + "(further write errors are logged once a minute, counted in /health)")
            }
            return .failure(error)
        }
    }

    /// Indexes the next rows of a search index build in a transaction of its own (see
    /// `SearchIndex.buildNext`); a failure is logged and stops the build until the next start.
    private func buildIndexStep() {
        do {
            try connection.execute("BEGIN IMMEDIATE")
            let read = try searchIndex.buildNext()
            let indexed = try searchIndex.finishTransaction()
            try connection.execute("COMMIT")
            indexed?()
            condition.lock()
            state.indexRowsRead += read ?? 0
            if (read ?? 0) < SearchIndex.buildStep {
                state.buildingIndex = false
                condition.broadcast()
            }
            condition.unlock()
            if let read, read < SearchIndex.buildStep {
                logger.info("local search: the index now holds every record stored")
            }
        } catch {
            try? connection.execute("ROLLBACK")
            searchIndex.discardTransaction()
            logger.warning("local search: cannot build the index: \(error); it stays partial until the next start")
            condition.lock()
            state.buildingIndex = false
            state.indexFailure = error
            condition.broadcast()
            condition.unlock()
        }
    }

    /// Empties the search index and starts its build (`rebuildIndex`), in a transaction of its own.
    private func restartIndex() {
        do {
            try connection.execute("BEGIN IMMEDIATE")
            try searchIndex.restart()
            let emptied = try searchIndex.finishTransaction()
            try connection.execute("COMMIT")
            emptied?()
            condition.lock()
            state.buildingIndex = true
        } catch {
            try? connection.execute("ROLLBACK")
            searchIndex.discardTransaction()
            condition.lock()
            state.indexFailure = error
        }
        state.restartingIndex = false
        condition.broadcast()
        condition.unlock()
    }

    /// Empties the search index and builds it again from every row, between the writer's batches;
    /// returns when it is built, telling `progress` the rows read so far every `interval` seconds.
    /// Throws why the build stopped short. Any thread but the writer's.
    func rebuildIndex(interval: Double, progress: (Int) -> Void) throws(SQLiteError) {
        condition.lock()
        state.restartingIndex = true
        state.indexRowsRead = 0
        state.indexFailure = nil
        condition.broadcast()
        while (state.restartingIndex || state.buildingIndex) && !state.closing {
            _ = condition.wait(until: Date(timeIntervalSinceNow: interval))
            let read = state.indexRowsRead
            condition.unlock()
            progress(read)
            condition.lock()
        }
        let failure = state.indexFailure
        condition.unlock()
        if let failure { throw failure }
    }

    /// Waits until a build of the search index under way (`SearchIndex`) has ended. Any thread
    /// but the writer's.
    func waitForIndexBuild() {
        condition.lock()
        while (state.restartingIndex || state.buildingIndex) && !state.closing { condition.wait() }
        condition.unlock()
    }

    /// The bytes of `key`'s row and, when `version` is asked for, its version
    /// (`ChangeLog.version(of:)`; nil for a damaged row), or nil when there is no row. A row an
    /// earlier build wrote has no version column: its record is read for it, once (the store that
    /// replaces the row writes one), and only when asked.
    private func row(_ key: String, version wanted: Bool) throws(SQLiteError) -> (bytes: Int, version: String?)? {
        try selectRow.bind(.text(key))
        defer { selectRow.reset() }
        guard try selectRow.step() else { return nil }
        let bytes = Int(selectRow.integer(at: 0))
        if let version = selectRow.optionalText(at: 1) { return (bytes, version) }
        guard wanted else { return (bytes, nil) }
        try selectRecord.bind(.text(key))
        defer { selectRecord.reset() }
        guard try selectRecord.step() else { return (bytes, nil) }
        let held = selectRecord.withBlob(at: 0) { CacheEntry.restored(record: $0, key: key) }
        return (bytes, held.map(ChangeLog.version(of:)))
    }

    /// Removes the least recently used rows while the bytes stored (counted so far, plus
    /// `change`) exceed the bound, down to `evictionTarget` of it.
    private func evict(_ change: inout Change) throws(SQLiteError) {
        condition.lock()
        let counted = state.bytes
        condition.unlock()
        guard let counted, counted + change.bytes > capacity else { return }
        let target = Int(Double(capacity) * Self.evictionTarget)
        while counted + change.bytes > target {
            try oldest.bind(.integer(256))
            var victims: [(key: String, bytes: Int, usedAt: Int64)] = []
            while try oldest.step() {
                victims.append((oldest.text(at: 0), Int(oldest.integer(at: 1)), oldest.integer(at: 2)))
            }
            guard !victims.isEmpty else { return }
            for victim in victims where counted + change.bytes > target {
                try delete.bind(.text(victim.key))
                try delete.step()
                try searchIndex.removed(victim.key)
                change.entries -= 1
                change.bytes -= victim.bytes
                change.evictions += 1
                change.oldestUse = victim.usedAt
            }
        }
    }

    /// Counts the rows and their bytes, and finds the oldest and latest use marks, through the
    /// `(used_at, bytes)` index: no record is read.
    private func countRows() {
        do {
            let statement = try connection.prepare(
                """
                SELECT count(*), coalesce(sum(bytes), 0), coalesce(min(used_at), 0), coalesce(max(used_at), 0)
                FROM entries INDEXED BY entries_by_use
                """)
            guard try statement.step() else { return }
            useSequence = statement.integer(at: 3)
            condition.lock()
            state.entries = Int(statement.integer(at: 0))
            state.bytes = Int(statement.integer(at: 1))
            state.oldestUse = statement.integer(at: 2)
            state.newestUse = useSequence
            condition.unlock()
            statement.reset()
        } catch {
            logger.warning("persistent cache: cannot count its rows: \(error); the bound is not enforced")
        }
    }
}
