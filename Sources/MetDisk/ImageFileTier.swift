import CSQLite
import Foundation
import MetEngine

/// The pictures' persistent tier: each picture's bytes in a file of its own under
/// `images/files/` in the data directory, indexed in `images/index.sqlite` (WAL) with its entry's
/// record (type, pixel size, the host's validators, lifetimes, ETag) and the file's length; bounded
/// by `capacity` bytes of files, least recently used first out.
///
/// Nothing torn or changed is ever served. A file is written whole to a temporary name, flushed to
/// the disk (`fsync`), renamed into place, and only then indexed; a process killed at any point
/// leaves at worst a file the index does not name, which the next start removes. A read checks the
/// file's length and its bytes' hash (the entry's strong ETag) against the index: a mismatch is a
/// miss, counted, logged, and the row and file removed. A file is hashed once per process: its
/// identity (device, inode, length, modification time) when written or verified is kept, and a
/// later read or `openFile` whose `fstat` shows the same identity trusts it (this tier never
/// changes a file in place: a new version is a new file renamed over the old).
///
/// Reads run on the caller's thread (a task's, never a loop's): one row lookup and one file read.
/// Writes, removals, use marks and evictions run in order on a writer queue of the tier's own; a
/// read made after a write sees it, even before it reaches the disk. Any thread.
public final class ImageFileTier: FileTier {
    private let root: String
    private let files: String
    private let capacity: Int
    private let logger: Logger
    /// The index's connection and statements; SQLite runs one call at a time on it.
    private let index: Locked<Index>
    /// Stores (the entry) and removals (nil) queued for the writer, by key: what reads see first.
    private let queued = Locked<[String: CacheEntry?]>([:])
    /// Keys read since the writer last wrote their use marks, with the time of their latest read.
    private let marks = Locked<[String: Int64]>([:])
    private let writer = DispatchQueue(label: "themet.image-writer")
    private let figures = Locked(PersistentTierStatistics())
    /// Names temporary files apart.
    private let serial = Locked<UInt64>(0)
    private let closed = Locked(false)
    /// By key, the version of each file this process wrote or hashed, and the identity it had.
    private let verified = Locked<[String: Verified]>([:])

    /// A file known to hold the bytes of the entry with `etag`.
    private struct Verified {
        let etag: String
        let file: String
        let identity: FileIdentity
    }

    /// The connection and its prepared statements.
    private final class Index: @unchecked Sendable {
        let connection: SQLiteConnection
        let select: SQLiteStatement
        let upsert: SQLiteStatement
        let delete: SQLiteStatement
        let touch: SQLiteStatement
        let oldest: SQLiteStatement

        init(_ connection: SQLiteConnection) throws(SQLiteError) {
            self.connection = connection
            select = try connection.prepare("SELECT bytes, file, record FROM images WHERE key = ?1")
            upsert = try connection.prepare(
                """
                INSERT INTO images (key, bytes, used_at, file, record) VALUES (?1, ?2, ?3, ?4, ?5)
                ON CONFLICT (key) DO UPDATE SET bytes = excluded.bytes, used_at = excluded.used_at,
                    file = excluded.file, record = excluded.record
                """)
            delete = try connection.prepare("DELETE FROM images WHERE key = ?1")
            touch = try connection.prepare("UPDATE images SET used_at = ?2 WHERE key = ?1")
            oldest = try connection.prepare("SELECT key, bytes, file FROM images ORDER BY used_at LIMIT 16")
        }

        /// The row of `key`: the file's length, its name, and the record.
        func row(_ key: String) throws(SQLiteError) -> (bytes: Int, file: String, record: [UInt8])? {
            try select.bind(.text(key))
            defer { select.reset() }
            guard try select.step() else { return nil }
            return (Int(select.integer(at: 0)), select.text(at: 1), select.blob(at: 2))
        }
    }

    /// Opens (or creates) the tier under `directory/images`, bounded by `capacity` bytes of
    /// pictures; a damaged or foreign index is moved aside and a new one made. Nil, with the reason
    /// logged, when the directory or index cannot be used: pictures are then kept in memory only.
    /// Files left by a killed process are removed in the background.
    public static func open(directory: String, capacity: Int, logger: Logger) -> ImageFileTier? {
        let root = directory + "/images"
        do {
            try FileManager.default.createDirectory(atPath: root + "/files", withIntermediateDirectories: true)
            let connection = try CacheDatabase.images.open(root + "/" + CacheDatabase.images.fileName, logger: logger)
            let tier = try ImageFileTier(root: root, connection: connection, capacity: capacity, logger: logger)
            tier.writer.async { tier.removeLeftovers() }
            return tier
        } catch {
            logger.warning("image files off: cannot use \(root): \(error); pictures are kept in memory only")
            return nil
        }
    }

    private init(root: String, connection: SQLiteConnection, capacity: Int, logger: Logger) throws {
        self.root = root
        files = root + "/files"
        self.capacity = capacity
        self.logger = logger
        index = Locked(try Index(connection))
        let totals = try connection.prepare("SELECT count(*), coalesce(sum(bytes), 0) FROM images")
        if try totals.step() {
            let (count, bytes) = (Int(totals.integer(at: 0)), Int(totals.integer(at: 1)))
            figures.withLock {
                $0.entries = count
                $0.bytes = bytes
            }
        }
        totals.reset()
    }

    // MARK: PersistentTier

    public func entry(for key: String) -> CacheEntry? {
        guard !closed.withLock({ $0 }) else { return nil }
        if let waiting = queued.withLock({ $0[key] }) { return waiting }
        let row: (bytes: Int, file: String, record: [UInt8])?
        do {
            row = try index.withLock { index throws(SQLiteError) in try index.row(key) }
        } catch {
            figures.withLock { $0.readErrors += 1 }
            logger.warning("\(root): cannot read the index row of \(key): \(error); treated as a miss")
            return nil
        }
        guard let row else {
            figures.withLock { $0.misses += 1 }
            return nil
        }
        guard let stored = CacheEntry.restored(record: row.record, key: key) else {
            return damaged(key, "its index row is damaged (checksum or format)")
        }
        var body: [UInt8] = []
        if stored.status == 200 {
            guard let (bytes, identity) = Self.read(files + "/" + row.file, length: row.bytes) else {
                return damaged(key, "its file \(row.file) is missing or not \(row.bytes) bytes long")
            }
            let known = verified.withLock { $0[key] }
            if known?.etag != stored.etag || known?.file != row.file || known?.identity != identity {
                guard ETag.strong(for: bytes) == stored.etag else {
                    return damaged(key, "its file \(row.file) does not hold the bytes it was stored with")
                }
                verified.withLock { $0[key] = Verified(etag: stored.etag, file: row.file, identity: identity) }
            }
            body = bytes
        }
        figures.withLock { $0.hits += 1 }
        marks.withLock { $0[key] = Int64(Date().timeIntervalSince1970) }
        return stored.withBody(body)
    }

    public func store(_ entry: CacheEntry) {
        guard !closed.withLock({ $0 }) else { return }
        queued.withLock { $0[entry.key] = .some(entry) }
        writer.async { [self] in
            write(entry)
            queued.withLock { queued in
                if case .some(.some(let waiting)) = queued[entry.key], waiting === entry { queued[entry.key] = nil }
            }
        }
    }

    public func remove(_ key: String) -> Bool {
        guard !closed.withLock({ $0 }) else { return false }
        let existed: Bool
        if let waiting = queued.withLock({ $0[key] }) {
            existed = waiting != nil
        } else {
            existed = ((try? index.withLock { index throws(SQLiteError) in try index.row(key) }) ?? nil) != nil
        }
        queued.withLock { $0[key] = .some(nil) }
        writer.async { [self] in
            delete(key)
            queued.withLock { queued in
                if case .some(.none) = queued[key] { queued[key] = nil }
            }
        }
        return existed
    }

    /// When the picture of `key` that the tier holds was stored, from its index row alone (its
    /// file is not read); nil when it holds none, or the row cannot be read. Any thread.
    func storedAt(of key: String) -> Double? {
        if let waiting = queued.withLock({ $0[key] }) { return waiting?.storedAt }
        guard let row = try? index.withLock({ index throws(SQLiteError) in try index.row(key) }) else { return nil }
        return CacheEntry.restored(record: row.record, key: key)?.storedAt
    }

    // MARK: FileTier

    public func openFile(key: String, etag: String) -> OpenFile? {
        guard !closed.withLock({ $0 }), let known = verified.withLock({ $0[key] }), known.etag == etag
        else { return nil }
        let descriptor = Glibc.open(files + "/" + known.file, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        let file = OpenFile(descriptor: descriptor)
        guard FileIdentity(of: descriptor) == known.identity else { return nil }
        return file
    }

    public var statistics: PersistentTierStatistics {
        var statistics = figures.withLock { $0 }
        statistics.location = root
        statistics.capacity = capacity
        statistics.queued = queued.withLock { $0.count }
        return statistics
    }

    /// Waits until everything queued is on the disk.
    public func flush() {
        writer.sync { writeMarks() }
    }

    /// Writes everything queued, then stops: reads after it miss and writes are ignored.
    public func close() {
        flush()
        closed.withLock { $0 = true }
    }

    // MARK: The writer

    /// Writes `entry`'s file (a 200's) and row, then evicts down to the capacity. Writer queue.
    private func write(_ entry: CacheEntry) {
        writeMarks()
        let file = entry.status == 200 ? Self.fileName(for: entry.key) : ""
        var written: Verified?
        if !file.isEmpty {
            do {
                written =
                    try kept(entry, in: file)
                    ?? Verified(
                        etag: entry.etag, file: file, identity: try writeFile(entry.body, to: file))
            } catch {
                figures.withLock { $0.writeErrors += 1 }
                logger.warning("\(root): cannot write the picture of \(entry.key): \(error); not kept on disk")
                return
            }
        }
        do {
            try index.withLock { index throws(SQLiteError) in
                let previous = try index.row(entry.key)
                try index.upsert.bind(
                    .text(entry.key), .integer(Int64(entry.body.count)), .integer(Int64(entry.storedAt)), .text(file),
                    .blob(entry.withBody([]).record))
                try index.upsert.step()
                // A picture the host no longer has: its old file goes with its old row.
                if let previous, !previous.file.isEmpty, previous.file != file { unlink(files + "/" + previous.file) }
                verified.withLock { $0[entry.key] = written }
                figures.withLock { figures in
                    figures.writes += 1
                    figures.entries = (figures.entries ?? 0) + (previous == nil ? 1 : 0)
                    figures.bytes = (figures.bytes ?? 0) + entry.body.count - (previous?.bytes ?? 0)
                }
            }
        } catch {
            figures.withLock { $0.writeErrors += 1 }
            logger.warning("\(root): cannot index the picture of \(entry.key): \(error); not kept on disk")
            return
        }
        evict()
    }

    /// What `files/<name>` is known to hold when it holds `entry`'s bytes already (a picture the
    /// host confirmed unchanged, stored again with new lifetimes): then it is not written again.
    private func kept(_ entry: CacheEntry, in name: String) -> Verified? {
        guard let known = verified.withLock({ $0[entry.key] }), known.etag == entry.etag, known.file == name else {
            return nil
        }
        let descriptor = Glibc.open(files + "/" + name, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { Glibc.close(descriptor) }
        return FileIdentity(of: descriptor) == known.identity ? known : nil
    }

    /// Writes `bytes` to `files/<name>`: a temporary file, flushed, renamed into place, and the
    /// directory flushed, so that the name holds either the old bytes or all of the new. Returns
    /// the file's identity.
    private func writeFile(_ bytes: [UInt8], to name: String) throws -> FileIdentity {
        let path = files + "/" + name
        let folder = String(path[..<path.lastIndex(of: "/")!])
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let number = serial.withLock { value -> UInt64 in
            value += 1
            return value
        }
        let temporary = path + Self.temporarySuffix + String(number)
        let descriptor = Glibc.open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw POSIXFailure("open", errno) }
        var failure: POSIXFailure?
        bytes.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = Glibc.write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    failure = POSIXFailure("write", errno)
                    return
                }
                offset += written
            }
        }
        if failure == nil, fsync(descriptor) != 0 { failure = POSIXFailure("fsync", errno) }
        let identity = FileIdentity(of: descriptor)
        Glibc.close(descriptor)
        if failure == nil, identity == nil { failure = POSIXFailure("fstat", errno) }
        if failure == nil, rename(temporary, path) != 0 { failure = POSIXFailure("rename", errno) }
        guard failure == nil, let identity else {
            unlink(temporary)
            throw failure ?? POSIXFailure("fstat", errno)
        }
        let directory = Glibc.open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if directory >= 0 {
            fsync(directory)
            Glibc.close(directory)
        }
        return identity
    }

    /// Removes `key`'s row and file. Writer queue.
    private func delete(_ key: String) {
        do {
            try index.withLock { index throws(SQLiteError) in
                guard let row = try index.row(key) else { return }
                try index.delete.bind(.text(key))
                try index.delete.step()
                if !row.file.isEmpty { unlink(files + "/" + row.file) }
                verified.withLock { $0[key] = nil }
                figures.withLock { figures in
                    figures.entries = max(0, (figures.entries ?? 1) - 1)
                    figures.bytes = max(0, (figures.bytes ?? 0) - row.bytes)
                }
            }
        } catch {
            figures.withLock { $0.writeErrors += 1 }
            logger.warning("\(root): cannot remove the picture of \(key): \(error)")
        }
    }

    /// Drops the least recently used pictures until the files fit the capacity. Writer queue.
    private func evict() {
        while figures.withLock({ ($0.bytes ?? 0) > capacity }) {
            let victims: [(key: String, bytes: Int, file: String)]
            do {
                victims = try index.withLock { index throws(SQLiteError) in
                    try index.oldest.bind()
                    defer { index.oldest.reset() }
                    var rows: [(String, Int, String)] = []
                    while try index.oldest.step() {
                        rows.append(
                            (index.oldest.text(at: 0), Int(index.oldest.integer(at: 1)), index.oldest.text(at: 2)))
                    }
                    return rows
                }
            } catch {
                figures.withLock { $0.writeErrors += 1 }
                return
            }
            guard !victims.isEmpty else { return }
            for victim in victims where figures.withLock({ ($0.bytes ?? 0) > capacity }) {
                delete(victim.key)
                figures.withLock { $0.evictions += 1 }
            }
        }
    }

    /// Writes the use marks of the pictures read since the last time. Writer queue.
    private func writeMarks() {
        let taken = marks.withLock { marks in
            defer { marks = [:] }
            return marks
        }
        guard !taken.isEmpty else { return }
        try? index.withLock { index throws(SQLiteError) in
            try index.connection.execute("BEGIN")
            for (key, time) in taken {
                try index.touch.bind(.text(key), .integer(time))
                try index.touch.step()
            }
            try index.connection.execute("COMMIT")
        }
    }

    /// Removes what a killed process left under `files/`: temporary files, and files no row names.
    /// Writer queue, once, at start-up.
    private func removeLeftovers() {
        var named = Set<String>()
        try? index.withLock { index throws(SQLiteError) in
            let all = try index.connection.prepare("SELECT file FROM images WHERE file != ''")
            while try all.step() { named.insert(all.text(at: 0)) }
        }
        var removed = 0
        let walker = FileManager.default.enumerator(atPath: files)
        while let name = walker?.nextObject() as? String {
            guard let attributes = walker?.fileAttributes, attributes[.type] as? FileAttributeType == .typeRegular,
                !named.contains(name)
            else { continue }
            if unlink(files + "/" + name) == 0 { removed += 1 }
        }
        if removed > 0 { logger.info("\(root): removed \(removed) picture files left by an interrupted write") }
    }

    // MARK: Helpers

    /// A row that cannot be served: counted, logged, removed.
    private func damaged(_ key: String, _ reason: String) -> CacheEntry? {
        figures.withLock { $0.corrupt += 1 }
        verified.withLock { $0[key] = nil }
        logger.warning("\(root): the picture of \(key) is not served: \(reason); treated as a miss and removed")
        _ = remove(key)
        return nil
    }

    /// What a temporary file's name ends with before its number.
    static let temporarySuffix = ".partial-"

    /// The file of `key`: two levels of the FNV-1a hash of the key in hex (`ab/abcdef….img`), so no
    /// folder holds more than a few hundred files.
    static func fileName(for key: String) -> String {
        let hex = String(FNV1a.hash(key.utf8), radix: 16)
        let padded = String(repeating: "0", count: 16 - hex.count) + hex
        return "\(padded.prefix(2))/\(padded).img"
    }

    /// The whole file at `path` and its identity, if it is exactly `length` bytes long; nil
    /// otherwise.
    static func read(_ path: String, length: Int) -> (bytes: [UInt8], identity: FileIdentity)? {
        let descriptor = Glibc.open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { Glibc.close(descriptor) }
        guard let identity = FileIdentity(of: descriptor), identity.length == length else { return nil }
        var complete = true
        let bytes = [UInt8](unsafeUninitializedCapacity: length) { buffer, count in
            var offset = 0
            while offset < length {
                let got = pread(descriptor, buffer.baseAddress! + offset, length - offset, off_t(offset))
                if got < 0, errno == EINTR { continue }
                guard got > 0 else { break }
                offset += got
            }
            complete = offset == length
            count = offset
        }
        return complete ? (bytes, identity) : nil
    }
}

/// What tells one file from another, or from itself changed: its device and inode, its length, and
/// its modification time to the nanosecond.
struct FileIdentity: Equatable {
    let device: UInt64
    let inode: UInt64
    let length: Int
    let modifiedSeconds: Int
    let modifiedNanoseconds: Int

    /// The identity of the open file `descriptor`; nil when `fstat` fails.
    init?(of descriptor: CInt) {
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { return nil }
        device = UInt64(status.st_dev)
        inode = UInt64(status.st_ino)
        length = Int(status.st_size)
        modifiedSeconds = Int(status.st_mtim.tv_sec)
        modifiedNanoseconds = Int(status.st_mtim.tv_nsec)
    }
}

/// A failed system call, named, with its `errno`'s text.
struct POSIXFailure: Error, CustomStringConvertible {
    let description: String

    init(_ call: String, _ code: Int32) {
        description = "\(call): \(String(cString: strerror(code)))"
    }
}

extension CacheEntry {
    /// The same entry holding `body` instead (its ETag unchanged): what the index keeps without the
    /// bytes, and what a read makes of the row and the file.
    func withBody(_ body: [UInt8]) -> CacheEntry {
        CacheEntry(
            key: key, kind: kind, status: status, body: body, etag: etag, gzipped: gzipped, message: message,
            details: details, storedAt: storedAt, freshUntil: freshUntil, staleUntil: staleUntil,
            revalidateUntil: revalidateUntil)
    }
}
