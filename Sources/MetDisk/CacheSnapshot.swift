import CSQLite
import Foundation
import MetEngine

/// A snapshot of the records' tier: one SQLite file a new instance starts from (`themet export`,
/// `themet import`). It is a consistent copy of `cache.sqlite` (`VACUUM INTO`, one read
/// transaction, while a server may be writing the cache), less any row whose record does not
/// verify, with an `application_id` of its own ("TMsn": neither a cache nor a snapshot is taken for
/// the other) and a `manifest` table of one row, the `SnapshotManifest` as JSON. When asked, it
/// also carries the picture files' tier (`SnapshotPictures`), whose totals the manifest lists
/// apart.
///
/// Importing verifies the whole file before changing anything: its kind and format, SQLite's check
/// of every page, every record (its checksum and key), and the manifest's count, bytes and digest
/// of the rows. A foreign, truncated or damaged file is refused with the reason and the target is
/// left as it was. Then each record is stored through the target's persistent tier (its writer,
/// bound and eviction: a smaller tier keeps the most recently used), unless the target holds the
/// same key stored at the same time or later; pictures likewise through the picture files' tier,
/// each first judged as a picture fetched from the image host would be (`ImageResource.admits`).
/// A snapshot is read, never written, while importing.
public enum CacheSnapshot {
    /// Marks a file as a TheMet snapshot (`PRAGMA application_id`, "TMsn").
    static let applicationID: Int64 = 0x544D_736E

    /// Rows read between two progress reports, and entries stored between two flushes of the
    /// target's writer (whose queue is bounded).
    private static let stride = 1_000

    /// Writes a snapshot of the cache in `directory` to `file` (a partial file beside it, renamed
    /// over `file` once whole, so that `file` is never half written), with the pictures of
    /// `directory/images` when `pictures`. `progress` is told the rows checked and the rows in
    /// all, every thousand records, every 64 pictures, and at the end. Blocking file I/O.
    public static func export(
        directory: String, to file: String, createdBy: String, at now: Double, syncStartedAt: Double?,
        pictures: Bool = false, progress: (Int, Int) -> Void
    ) throws(SnapshotError) -> SnapshotManifest {
        let source = directory + "/" + CacheDatabase.entries.fileName
        guard FileManager.default.fileExists(atPath: source) else { throw .noCache(source) }
        let partial = file + ".partial-\(ProcessInfo.processInfo.processIdentifier)"
        try? FileManager.default.removeItem(atPath: partial)
        do throws(SnapshotError) {
            let manifest = try write(
                partial, from: source, pictures: pictures ? directory + "/images" : nil, createdBy: createdBy, at: now,
                syncStartedAt, progress)
            guard rename(partial, file) == 0 else {
                throw SnapshotError.io("\(file): \(String(cString: strerror(errno)))")
            }
            return manifest
        } catch {
            try? FileManager.default.removeItem(atPath: partial)
            throw error
        }
    }

    /// The copy into `partial`, its unverifiable rows taken out, the pictures under `pictureRoot`
    /// added when given, and its manifest written; closed before it returns.
    private static func write(
        _ partial: String, from source: String, pictures pictureRoot: String?, createdBy: String, at now: Double,
        _ syncStartedAt: Double?, _ progress: (Int, Int) -> Void
    ) throws(SnapshotError) -> SnapshotManifest {
        try sqlite {
            let cache = try SQLiteConnection(path: source, create: false, readOnly: true)
            try CacheDatabase.configure(cache)
            guard try cache.integer("PRAGMA application_id") == CacheDatabase.entries.applicationID else {
                throw SnapshotError.noCache("\(source) is not a TheMet cache")
            }
            let vacuum = try cache.prepare("VACUUM INTO ?1")
            try vacuum.bind(.text(partial))
            try vacuum.step()
        }
        return try sqlite { () throws -> SnapshotManifest in
            let copy = try SQLiteConnection(path: partial, create: false)
            // One file, whatever mode the copy came in: only the file itself is renamed into place.
            _ = try copy.text("PRAGMA journal_mode = DELETE")
            try copy.execute("BEGIN IMMEDIATE")
            let total = Int(try copy.integer("SELECT count(*) FROM entries"))
            var rows = Rows()
            var damaged: [Int64] = []
            let select = try copy.prepare("SELECT rowid, key, record FROM entries")
            try select.bind()
            while try select.step() {
                let key = select.text(at: 1)
                if !select.withBlob(at: 2, { rows.add($0, key: key) }) { damaged.append(select.integer(at: 0)) }
                if (rows.count + damaged.count) % stride == 0 { progress(rows.count + damaged.count, total) }
            }
            let delete = try copy.prepare("DELETE FROM entries WHERE rowid = ?1")
            for rowid in damaged {
                try delete.bind(.integer(rowid))
                try delete.step()
            }
            let pictures = try pictureRoot.map { root in
                try SnapshotPictures.copy(from: root, into: copy) { progress(total + $0, total + $1) }
            }
            let manifest = SnapshotManifest(
                format: SnapshotManifest.currentFormat, createdBy: createdBy, createdAt: now, records: rows.count,
                bytes: rows.bytes, digest: rows.digestText, syncStartedAt: syncStartedAt, pictures: pictures)
            // The change log is its cache file's own: the importing tier notes its own changes, and
            // indexes what it stores.
            for table in ChangeLog.tableNames + SearchIndex.tableNames {
                try copy.execute("DROP TABLE IF EXISTS \(table)")
            }
            try copy.execute("CREATE TABLE manifest (json TEXT NOT NULL)")
            let insert = try copy.prepare("INSERT INTO manifest (json) VALUES (?1)")
            try insert.bind(.text(try manifest.json()))
            try insert.step()
            try copy.execute("PRAGMA application_id = \(applicationID)")
            try copy.execute("COMMIT")
            if pictures == nil { progress(total, total) }
            return manifest
        }
    }

    /// Checks all of `file` (see the type's comment) without changing it: the snapshot to import,
    /// when it is a whole TheMet snapshot this build reads. `progress` as for `export`. Blocking
    /// file I/O.
    public static func verify(_ file: String, progress: (Int, Int) -> Void) throws(SnapshotError) -> VerifiedSnapshot {
        try open(file) { snapshot, manifest throws in
            let total = manifest.records + (manifest.pictures?.records ?? 0)
            var rows = Rows()
            try eachRow(of: snapshot, total: manifest.records, progress: { done, _ in progress(done, total) }) {
                key, record throws in
                guard rows.add(record, key: key) else {
                    throw SnapshotError.damaged("the record of \(key) does not verify (checksum, key or format)")
                }
            }
            try rows.expect(manifest.records, manifest.bytes, manifest.digest, of: "rows")
            let hasPictures = try snapshot.integer(
                "SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = '\(SnapshotPictures.table)'")
            guard (hasPictures == 1) == (manifest.pictures != nil) else {
                throw SnapshotError.damaged(
                    hasPictures == 1 ? "it holds pictures its manifest does not list" : "its pictures are missing")
            }
            if let listed = manifest.pictures {
                var pictures = Rows()
                try eachRow(
                    of: snapshot, table: SnapshotPictures.table, every: SnapshotPictures.stride,
                    total: listed.records, progress: { done, _ in progress(manifest.records + done, total) }
                ) { key, record throws in
                    guard pictures.add(record, key: key) else {
                        throw SnapshotError.damaged("the picture of \(key) does not verify (checksum, key or format)")
                    }
                }
                try pictures.expect(listed.records, listed.bytes, listed.digest, of: "pictures")
            }
            return VerifiedSnapshot(file: file, manifest: manifest)
        }
    }

    /// Stores each entry of `snapshot` (verified whole by `verify`) in `tier` unless `tier` holds
    /// the same key stored at the same time or later, then each of its pictures in `pictures`
    /// likewise (when given; a picture its bounds do not admit is left out and counted); waits
    /// until the tiers have written them. Each row is checked again as it is read (the file may
    /// have changed since). `progress` is told the rows handled and the rows in all. Throws when
    /// a tier could not write some of them (a full disk: the log says why; what was written
    /// stays). Blocking file I/O.
    public static func importing(
        _ verified: VerifiedSnapshot, into tier: DiskCache, pictures: PictureTarget? = nil,
        progress: (Int, Int) -> Void
    ) throws(SnapshotError) -> SnapshotImport {
        let (file, manifest) = (verified.file, verified.manifest)
        let total = manifest.records + (pictures == nil ? 0 : manifest.pictures?.records ?? 0)
        let failedBefore = tier.statistics.writeErrors + (pictures?.tier.statistics.writeErrors ?? 0)
        let report = try open(file) { snapshot, _ throws -> SnapshotImport in
            var report = SnapshotImport(manifest: manifest)
            // Least recently used first: the target marks each store as its latest use, so the
            // snapshot's order of use carries over, and a smaller bound keeps the most used.
            try eachRow(
                of: snapshot, orderedByUse: true, total: manifest.records,
                progress: { done, _ in progress(done, total) }
            ) {
                key, record throws in
                guard let entry = CacheEntry.restored(record: record, key: key) else {
                    throw SnapshotError.damaged("the record of \(key) changed while it was imported")
                }
                if let held = tier.entry(for: key), held.storedAt >= entry.storedAt {
                    report.kept += 1
                } else {
                    tier.store(entry)
                    report.stored += 1
                }
                if (report.stored + report.kept) % stride == 0 { tier.flush() }
            }
            tier.flush()
            if let pictures, manifest.pictures != nil {
                report.pictures = try importPictures(of: snapshot, into: pictures) {
                    done, _ in progress(manifest.records + done, total)
                }
            }
            return report
        }
        let failed = tier.statistics.writeErrors + (pictures?.tier.statistics.writeErrors ?? 0) - failedBefore
        guard failed == 0 else {
            throw .sqlite(
                "the cache could not write all of the import (\(failed) failed write(s); its warning in the log says "
                    + "why: a full disk?); what was written stays")
        }
        return report
    }

    /// Stores each picture of `snapshot` that `target` admits in its tier unless the tier holds the
    /// same key stored at the same time or later, least recently used first; flushes the tier's
    /// writer every 64 MiB, so that what waits to be written stays bounded.
    private static func importPictures(
        of snapshot: SQLiteConnection, into target: PictureTarget, progress: (Int, Int) -> Void
    ) throws -> SnapshotImport.Pictures {
        var report = SnapshotImport.Pictures()
        var queued = 0
        let total = Int(try snapshot.integer("SELECT count(*) FROM \(SnapshotPictures.table)"))
        try eachRow(
            of: snapshot, table: SnapshotPictures.table, orderedByUse: true, every: SnapshotPictures.stride,
            total: total, progress: progress
        ) { key, record throws in
            guard let entry = CacheEntry.restored(record: record, key: key) else {
                throw SnapshotError.damaged("the picture of \(key) changed while it was imported")
            }
            guard ImageResource.admits(entry, maxPixels: target.maxPixels, maxBytes: target.maxBytes) else {
                report.refused += 1
                return
            }
            if let held = target.tier.storedAt(of: key), held >= entry.storedAt {
                report.kept += 1
                return
            }
            target.tier.store(entry)
            report.stored += 1
            queued += entry.body.count
            if queued >= 64 << 20 {
                target.tier.flush()
                queued = 0
            }
        }
        target.tier.flush()
        return report
    }

    /// `body` with `file` opened for reading only, once it is known to be a snapshot this build
    /// reads, whole as far as SQLite can tell, with its manifest.
    private static func open<Result>(
        _ file: String, _ body: (SQLiteConnection, SnapshotManifest) throws -> Result
    ) throws(SnapshotError) -> Result {
        guard FileManager.default.fileExists(atPath: file) else { throw .notASnapshot("\(file): no such file") }
        return try sqlite { () throws -> Result in
            let snapshot: SQLiteConnection
            let application: Int64
            do {
                snapshot = try SQLiteConnection(path: file, create: false, readOnly: true)
                application = try snapshot.integer("PRAGMA application_id")
            } catch let error as SQLiteError where error.code == SQLITE_NOTADB {
                throw SnapshotError.notASnapshot("\(file) is not an SQLite database (\(error.message))")
            } catch let error as SQLiteError where error.code == SQLITE_CORRUPT {
                throw SnapshotError.damaged("\(file) is cut off or damaged (\(error.message))")
            }
            guard application == applicationID else {
                throw SnapshotError.notASnapshot(
                    application == CacheDatabase.entries.applicationID
                        ? "\(file) is a cache, not a snapshot of one (themet export makes those)"
                        : "\(file) is an SQLite database of another program (application_id \(application))")
            }
            let check: String
            do {
                check = try snapshot.text("PRAGMA quick_check")
            } catch let error as SQLiteError where error.meansUnusableFile {
                throw SnapshotError.damaged("\(file): \(error.message)")
            }
            guard check == "ok" else { throw SnapshotError.damaged("\(file): \(check)") }
            let json = try snapshot.text("SELECT json FROM manifest")
            let manifest = try SnapshotManifest(json: json)
            guard manifest.format == SnapshotManifest.currentFormat else {
                throw SnapshotError.unsupported(
                    "\(file) is a snapshot of format \(manifest.format); this build reads format "
                        + "\(SnapshotManifest.currentFormat)")
            }
            return try body(snapshot, manifest)
        }
    }

    /// Calls `body` with each row's key and record (where SQLite holds it) of `table`, in rowid
    /// order or, when `orderedByUse`, least recently used first; tells `progress` every `every` rows.
    private static func eachRow(
        of snapshot: SQLiteConnection, table: String = "entries", orderedByUse: Bool = false, every: Int = stride,
        total: Int, progress: (Int, Int) -> Void, _ body: (String, UnsafeRawBufferPointer) throws -> Void
    ) throws {
        let select = try snapshot.prepare(
            "SELECT key, record FROM \(table)" + (orderedByUse ? " ORDER BY used_at" : ""))
        try select.bind()
        defer { select.reset() }
        var count = 0
        while try select.step() {
            let key = select.text(at: 0)
            var failure: (any Error)?
            select.withBlob(at: 1) { record in
                do { try body(key, record) } catch { failure = error }
            }
            if let failure { throw failure }
            count += 1
            if count % every == 0 { progress(count, total) }
        }
        progress(count, total)
    }

    /// Runs `body`, reporting SQLite's failures (and any other error but a `SnapshotError`) as a
    /// `SnapshotError.sqlite`.
    private static func sqlite<Result>(_ body: () throws -> Result) throws(SnapshotError) -> Result {
        do {
            return try body()
        } catch let error as SnapshotError {
            throw error
        } catch let error as SQLiteError {
            throw error.meansUnusableFile ? .damaged(error.message) : .sqlite(error.message)
        } catch {
            throw .sqlite("\(error)")
        }
    }

    /// What the rows of a snapshot add up to: how many, their records' bytes, and a digest (the
    /// wrapping sum of the records' own checksums, their last 8 bytes, which cover each record
    /// with its key), which a row taken out, added or replaced changes.
    struct Rows {
        var count = 0
        var bytes = 0
        var digest: UInt64 = 0

        var digestText: String { String(digest, radix: 16) }

        /// Counts `record` if it is `key`'s entry, whole and verified; false when it is not.
        mutating func add(_ record: UnsafeRawBufferPointer, key: String) -> Bool {
            guard CacheEntry.restored(record: record, key: key) != nil else { return false }
            var sum: UInt64 = 0
            withUnsafeMutableBytes(of: &sum) { $0.copyMemory(from: UnsafeRawBufferPointer(rebasing: record.suffix(8))) }
            digest &+= UInt64(littleEndian: sum)
            count += 1
            bytes += record.count
            return true
        }

        /// The totals as a manifest lists a snapshot's pictures.
        var pictures: SnapshotManifest.Pictures {
            SnapshotManifest.Pictures(records: count, bytes: bytes, digest: digestText)
        }

        /// Throws unless these are the totals the manifest lists (`what`: the rows' name, for the
        /// error).
        func expect(_ records: Int, _ listedBytes: Int, _ listedDigest: String, of what: String)
            throws(SnapshotError)
        {
            guard count == records, bytes == listedBytes, digestText == listedDigest else {
                throw .damaged(
                    "its \(what) (\(count), \(bytes) bytes, digest \(digestText)) are not the ones its manifest "
                        + "lists (\(records), \(listedBytes) bytes, digest \(listedDigest))")
            }
        }
    }
}

/// What a snapshot says of itself (its `manifest` table's one row, as JSON).
public struct SnapshotManifest: Codable, Sendable, Equatable {
    /// The format this build writes and reads.
    public static let currentFormat = 1

    public var format: Int
    /// The program that made it (`themet 0.1.0`).
    public var createdBy: String
    /// When it was made, in seconds since 1970.
    public var createdAt: Double
    /// The records it holds, and their bytes.
    public var records: Int
    public var bytes: Int
    /// The digest of its rows (see `CacheSnapshot`), in hexadecimal.
    public var digest: String
    /// When the last successful `metadataDate` sync of the cache it was made from started, if any.
    public var syncStartedAt: Double?
    /// The pictures it holds, listed apart from the records; nil when it was made without them.
    public var pictures: Pictures?

    /// What a snapshot's pictures add up to (as `records`, `bytes` and `digest` are for records).
    public struct Pictures: Codable, Sendable, Equatable {
        public var records: Int
        public var bytes: Int
        public var digest: String
    }

    func json() throws -> String {
        String(decoding: try JSONEncoder().encode(self), as: UTF8.self)
    }

    init(
        format: Int, createdBy: String, createdAt: Double, records: Int, bytes: Int, digest: String,
        syncStartedAt: Double?, pictures: Pictures?
    ) {
        self.format = format
        self.createdBy = createdBy
        self.createdAt = createdAt
        self.records = records
        self.bytes = bytes
        self.digest = digest
        self.syncStartedAt = syncStartedAt
        self.pictures = pictures
    }

    init(json: String) throws(SnapshotError) {
        do {
            self = try JSONDecoder().decode(Self.self, from: Data(json.utf8))
        } catch {
            throw .damaged("its manifest cannot be read (\(error.localizedDescription))")
        }
    }
}

/// A snapshot file that `CacheSnapshot.verify` found whole, and its manifest: what an import takes.
public struct VerifiedSnapshot: Sendable, Equatable {
    public let file: String
    public let manifest: SnapshotManifest
}

/// What an import did.
public struct SnapshotImport: Sendable, Equatable {
    public var manifest: SnapshotManifest
    /// Entries stored, and entries the target already held as new or newer (left as they were).
    public var stored = 0
    public var kept = 0
    /// What became of the pictures; nil when none were imported (the snapshot had none, or the
    /// target keeps no picture files).
    public var pictures: Pictures?

    /// Pictures stored, kept (held as new or newer), and refused: beyond the target's bounds, or
    /// not the picture their details say.
    public struct Pictures: Sendable, Equatable {
        public var stored = 0
        public var kept = 0
        public var refused = 0
    }
}

/// Where an import puts a snapshot's pictures: the picture files' tier, and the bounds each must
/// keep (`--image-max-pixels`, `--image-max-bytes`), as one fetched from the image host would.
public struct PictureTarget {
    public let tier: ImageFileTier
    public let maxPixels: Int
    public let maxBytes: Int

    public init(tier: ImageFileTier, maxPixels: Int, maxBytes: Int) {
        self.tier = tier
        self.maxPixels = maxPixels
        self.maxBytes = maxBytes
    }
}

/// Why a snapshot could not be made or was refused.
public enum SnapshotError: Error, CustomStringConvertible, Equatable {
    /// No cache to export from.
    case noCache(String)
    /// Not a snapshot: missing, another program's file, a cache itself.
    case notASnapshot(String)
    /// A snapshot, but cut off or damaged.
    case damaged(String)
    /// A snapshot of a format this build does not read.
    case unsupported(String)
    /// SQLite failed otherwise (a full disk, a lock held too long, …).
    case sqlite(String)
    case io(String)

    public var description: String {
        switch self {
        case .noCache(let reason): "no cache to export: \(reason)"
        case .notASnapshot(let reason): "not a TheMet snapshot: \(reason)"
        case .damaged(let reason): "the snapshot is damaged: \(reason)"
        case .unsupported(let reason): reason
        case .sqlite(let reason): reason
        case .io(let reason): reason
        }
    }
}
