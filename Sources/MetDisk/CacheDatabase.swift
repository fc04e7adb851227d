import CSQLite
import Foundation
import MetEngine

/// One of the cache's SQLite files: its name, its schema, and what happens when a file is there
/// that is not it. `entries` holds the records' tier; `images` indexes the picture files.
///
/// `entries`: the key, the row's size in bytes, a use sequence number (larger = used more recently;
/// eviction takes the smallest), the record's version for the change log (`ChangeLog`; added to
/// files of earlier builds, after the record) and the entry's record (`CacheEntry.record`, which
/// carries its own checksum). The small columns come first, so reading them reads no record's
/// overflow pages, and an index on `(used_at, bytes)` covers eviction and the start-up count.
///
/// `images`: the same for pictures, whose bodies are files (`ImageFileTier`): the row's record is
/// the entry's without its body, `file` names the body's file (empty for a negative entry), `bytes`
/// is the file's length.
struct CacheDatabase: Sendable {
    /// The file's name in its directory.
    let fileName: String
    /// Marks the file as this kind of TheMet file (`PRAGMA application_id`).
    let applicationID: Int64
    /// The schema version (`PRAGMA user_version`); a file of another version is moved aside.
    let schemaVersion: Int64
    /// The tables and indexes, made in a new file.
    let tables: String
    /// What was added since the schema version (tables, columns), made where missing whenever the
    /// file is opened (in a transaction of its own, only when something is missing): older builds
    /// ignore it, so it needs no new version.
    var additions: (@Sendable (SQLiteConnection) throws(SQLiteError) -> Void)?

    var schema: String {
        "\(tables)\nPRAGMA application_id = \(applicationID);\nPRAGMA user_version = \(schemaVersion);"
    }

    /// The records' tier, `cache.sqlite` in the data directory ("TMet").
    static let entries = CacheDatabase(
        fileName: "cache.sqlite", applicationID: 0x544D_6574, schemaVersion: 1,
        tables: """
            CREATE TABLE entries (
                key TEXT PRIMARY KEY NOT NULL,
                bytes INTEGER NOT NULL,
                used_at INTEGER NOT NULL,
                etag TEXT,
                record BLOB NOT NULL
            );
            CREATE INDEX entries_by_use ON entries (used_at, bytes);
            """,
        additions: { connection throws(SQLiteError) in
            try ChangeLog.add(to: connection)
            try SearchIndex.add(to: connection)
        })

    /// The pictures' index, `images/index.sqlite` in the data directory ("TMim").
    static let images = CacheDatabase(
        fileName: "index.sqlite", applicationID: 0x544D_696D, schemaVersion: 1,
        tables: """
            CREATE TABLE images (
                key TEXT PRIMARY KEY NOT NULL,
                bytes INTEGER NOT NULL,
                used_at INTEGER NOT NULL,
                file TEXT NOT NULL,
                record BLOB NOT NULL
            );
            CREATE INDEX images_by_use ON images (used_at, bytes);
            """)

    /// Why the file could not serve as the cache.
    enum OpenError: Error, CustomStringConvertible {
        /// SQLite refused it (unreadable, read-only, disk full, …): reported, the file left alone.
        case sqlite(SQLiteError)
        /// A database, but not this schema (another program's, or another version's).
        case foreign(String)

        var description: String {
            switch self {
            case .sqlite(let error): error.message
            case .foreign(let reason): reason
            }
        }
    }

    /// Opens (creating if missing) the writer's connection to `path`, in WAL mode with the schema.
    /// A file that is damaged, not a database, or another schema's is moved aside (never deleted)
    /// and a new one made; any other failure is thrown, the file left as it was.
    func open(_ path: String, logger: Logger) throws(OpenError) -> SQLiteConnection {
        do {
            return try openExisting(path)
        } catch let error {
            switch error {
            case .sqlite(let failure) where !failure.meansUnusableFile: throw error
            default: break
            }
            let aside = Self.moveAside(path, logger: logger, reason: error.description)
            guard aside else { throw error }
            return try openExisting(path)
        }
    }

    /// Opens `path` and checks or makes the schema; throws without touching the file.
    private func openExisting(_ path: String) throws(OpenError) -> SQLiteConnection {
        do {
            let connection = try SQLiteConnection(path: path, create: true)
            try Self.configure(connection)
            let mode = try connection.text("PRAGMA journal_mode = WAL")
            guard mode == "wal" else { throw OpenError.foreign("SQLite kept journal mode '\(mode)' instead of WAL") }
            try connection.execute("PRAGMA synchronous = NORMAL")
            let tables = try connection.integer("SELECT count(*) FROM sqlite_schema")
            if tables == 0 {
                try connection.execute("BEGIN IMMEDIATE; \(schema) COMMIT;")
                try additions?(connection)
                return connection
            }
            let application = try connection.integer("PRAGMA application_id")
            let version = try connection.integer("PRAGMA user_version")
            guard application == applicationID else {
                throw OpenError.foreign(
                    "the file is an SQLite database of another program (application_id \(application))")
            }
            guard version == schemaVersion else {
                throw OpenError.foreign(
                    "the file has cache schema version \(version); this build uses \(schemaVersion)")
            }
            try additions?(connection)
            return connection
        } catch let error as SQLiteError {
            throw .sqlite(error)
        } catch let error as OpenError {
            throw error
        } catch {
            throw .foreign("\(error)")
        }
    }

    /// Settings every connection gets: wait up to 5 s for another connection's lock (another
    /// process, such as `themet warm`, writing), and the file read with `pread`, never memory-mapped
    /// (0 is Debian's default, said here so that no other build of SQLite maps it): a file truncated
    /// under a mapping kills the process with SIGBUS, while a short read is an error, and a damaged
    /// row a miss. The WAL's index (`-shm`) is mapped whatever this says: see the README.
    static func configure(_ connection: SQLiteConnection) throws(SQLiteError) {
        try connection.execute("PRAGMA busy_timeout = 5000")
        try connection.execute("PRAGMA mmap_size = 0")
    }

    /// Moves `path` and its `-wal` and `-shm` files aside (see `SetAside`), logging why; false
    /// when it cannot.
    private static func moveAside(_ path: String, logger: Logger, reason: String) -> Bool {
        do {
            let aside = try SetAside.move(path, companions: ["-wal", "-shm"])
            logger.warning("\(path) cannot serve as the cache (\(reason)); moved it to \(aside) and started a new one")
            return true
        } catch {
            logger.warning(
                "\(path) cannot serve as the cache (\(reason)) and could not be moved aside: "
                    + "\(error.localizedDescription)")
            return false
        }
    }
}
