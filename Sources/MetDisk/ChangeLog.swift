import MetEngine

/// The change log of `cache.sqlite` (`ObjectChange`, `GET /changes`): the writer notes changes in
/// the transaction that stores the records, so a change is listed exactly when its record is on
/// the disk; readers page through it.
///
/// What it adds to a file of schema version 1 when the file is opened (`CacheDatabase.additions`):
/// older builds ignore it, and changes they store are not noted.
/// - `entries.etag`: each row's version, its record's ETag ('' for a 404), which the store that
///   replaces the row compares with its own. In a new file it comes before the record; added to
///   an earlier build's file it comes after it (the writer's look-up then reads the record's
///   overflow pages too). NULL in rows an earlier build wrote: the writer then reads the version
///   from the record itself. A record evicted or purged and fetched again is listed as `stored`
///   again: the log knows only what the tier holds, within its bound.
/// - `changes`: the log, `seq` ascending from 1. The newest `retention` changes are kept
///   (`DiskCache.changeRetention`); the batch that passes the bound by a tenth drops the older
///   ones.
/// - `change_log`: one row, the log's identity, 16 random hex digits made with the tables: a
///   cursor from a log that was reset or replaced names another.
///
/// The writer's instance is used on the writer's thread only, inside its transactions.
final class ChangeLog {
    /// Adds what the log needs to `connection`'s file where it is missing, in a transaction of its
    /// own; a file that has it all is only read (opening takes no write lock, which another
    /// process writing could hold past the busy timeout).
    static func add(to connection: SQLiteConnection) throws(SQLiteError) {
        let present = try connection.integer(
            """
            SELECT (SELECT count(*) FROM pragma_table_info('entries') WHERE name = 'etag')
                + (SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name IN ('changes', 'change_log'))
            """)
        // The log's identity is made with its table.
        guard present < 3 else { return }
        try connection.execute("BEGIN IMMEDIATE")
        do {
            if try connection.integer("SELECT count(*) FROM pragma_table_info('entries') WHERE name = 'etag'") == 0 {
                try connection.execute("ALTER TABLE entries ADD COLUMN etag TEXT")
            }
            try connection.execute(
                """
                CREATE TABLE IF NOT EXISTS changes (
                    seq INTEGER PRIMARY KEY, object_id INTEGER NOT NULL, change INTEGER NOT NULL,
                    fetched_at REAL NOT NULL);
                CREATE TABLE IF NOT EXISTS change_log (id INTEGER PRIMARY KEY CHECK (id = 1), log TEXT NOT NULL);
                INSERT OR IGNORE INTO change_log (id, log) VALUES (1, lower(hex(randomblob(8))));
                COMMIT;
                """)
        } catch {
            try? connection.execute("ROLLBACK")
            throw error
        }
    }

    /// The tables, which a snapshot leaves out: a log is its own cache file's.
    static let tableNames = ["changes", "change_log"]

    /// The version a row of `entry` keeps: its ETag for a 200, '' for anything else.
    static func version(of entry: CacheEntry) -> String { entry.status == 200 ? entry.etag : "" }

    private let retention: Int
    private let insert: SQLiteStatement
    private let bounds: SQLiteStatement
    private let prune: SQLiteStatement

    /// Prepares the writer's statements on `connection`, the writer's own.
    init(connection: SQLiteConnection, retention: Int) throws(SQLiteError) {
        self.retention = retention
        // `seq` is the rowid: SQLite gives the next past the largest (the log never drops its newest).
        insert = try connection.prepare("INSERT INTO changes (object_id, change, fetched_at) VALUES (?1, ?2, ?3)")
        bounds = try connection.prepare("SELECT coalesce(min(seq), 0), coalesce(max(seq), 0) FROM changes")
        prune = try connection.prepare("DELETE FROM changes WHERE seq <= ?1")
    }

    /// Notes what storing `entry` over a row of version `previous` (nil: no row, or an earlier
    /// build's) changes (see `ObjectChange`), in the writer's open transaction; whether it noted
    /// one. Entries of other kinds, and statuses other than 200 and 404, note nothing.
    func note(_ entry: CacheEntry, replacing previous: String?) throws(SQLiteError) -> Bool {
        guard entry.kind == .object, entry.status == 200 || entry.status == 404,
            let id = MetResource.objectID(inKey: entry.key)
        else { return false }
        let kind: ObjectChange.Kind
        if entry.status == 200 {
            guard previous != entry.etag else { return false }
            kind = previous == nil || previous == "" ? .stored : .changed
        } else {
            guard let previous, !previous.isEmpty else { return false }
            kind = .withdrawn
        }
        try insert.bind(.integer(Int64(id)), .integer(Int64(kind.rawValue)), .real(entry.storedAt))
        try insert.step()
        return true
    }

    /// Drops the oldest changes once more than `retention` and a tenth are kept, down to
    /// `retention`. In the writer's open transaction.
    func pruneIfDue() throws(SQLiteError) {
        guard try bounds.step() else { return }
        let (oldest, newest) = (bounds.integer(at: 0), bounds.integer(at: 1))
        bounds.reset()
        guard newest - oldest + 1 > Int64(retention + retention / 10) else { return }
        try prune.bind(.integer(newest - Int64(retention)))
        try prune.step()
    }

    /// At most `limit` changes from `start`, read in one transaction on `connection` (a reader's).
    static func page(on connection: SQLiteConnection, from start: ChangeStart, limit: Int) throws(SQLiteError)
        -> ChangePage
    {
        try connection.execute("BEGIN")
        defer { try? connection.execute("COMMIT") }
        let head = try connection.prepare(
            "SELECT (SELECT log FROM change_log WHERE id = 1), coalesce(min(seq), 0), coalesce(max(seq), 0) FROM changes"
        )
        guard try head.step() else { return .expired(reason: "the change log is missing") }
        let log = head.text(at: 0)
        let (oldest, newest) = (head.integer(at: 1), head.integer(at: 2))
        head.reset()
        let after: Int64
        switch start {
        case .oldest: after = max(0, oldest - 1)
        case .latest: return .changes([], next: ChangeCursor(log: log, sequence: newest), more: false)
        case .after(let cursor):
            guard cursor.log == log else {
                return .expired(
                    reason: "the cursor is from another change log (this server's cache was reset or replaced)")
            }
            guard cursor.sequence <= newest else {
                return .expired(reason: "the cursor is ahead of this change log, which ends at \(newest)")
            }
            guard oldest == 0 || cursor.sequence >= oldest - 1 else {
                return .expired(
                    reason:
                        "the changes after the cursor are no longer kept (the log keeps the newest; it begins at \(oldest))"
                )
            }
            after = cursor.sequence
        }
        let select = try connection.prepare(
            "SELECT seq, object_id, change, fetched_at FROM changes WHERE seq > ?1 ORDER BY seq LIMIT ?2")
        try select.bind(.integer(after), .integer(Int64(limit) + 1))
        var changes: [ObjectChange] = []
        var read = 0
        var next = after
        var more = false
        while try select.step() {
            guard read < limit else {
                more = true
                select.reset()
                break
            }
            read += 1
            next = select.integer(at: 0)
            // A kind this build does not know (a later build's) is passed over, not listed wrong.
            guard let kind = ObjectChange.Kind(rawValue: Int(select.integer(at: 2))) else { continue }
            changes.append(
                ObjectChange(
                    sequence: next, objectID: Int(select.integer(at: 1)), kind: kind, fetchedAt: select.real(at: 3)))
        }
        return .changes(changes, next: ChangeCursor(log: log, sequence: next), more: more)
    }
}
