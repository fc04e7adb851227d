import CSQLite
import Foundation
import MetEngine
import TestKit
import Testing

@testable import MetDisk

@Suite("The SQLite tier keeps entries across restarts and refuses damaged ones")
struct DiskCacheTests {
    private static let policy = FreshnessPolicy()

    /// An object entry with a body of `size` bytes that names `id`, a gzip copy and a summary.
    static func entry(_ id: Int, size: Int = 2_000, storedAt: Double = 1_000) -> CacheEntry {
        let head = #"{"objectID":\#(id),"title":"Work \#(id)","x":""#
        let body = Array((head + String(repeating: "m", count: max(0, size - head.utf8.count - 2)) + #""}"#).utf8)
        var summary = ObjectSummary(objectID: id)
        summary.title = "Work \(id)"
        summary.objectBeginDate = -200
        summary.isPublicDomain = true
        return CacheEntry(
            key: "/public/collection/v1/objects/\(id)", kind: .object, status: 200, body: body, storedAt: storedAt,
            policy: policy, details: .object(summary), compress: { Array($0.prefix(100)) })
    }

    static func open(_ directory: TemporaryDirectory, capacity: Int = 1 << 30, log: MemoryLog = MemoryLog())
        throws -> DiskCache
    {
        try #require(DiskCache.open(directory: directory.path, capacity: capacity, logger: log.logger()))
    }

    /// Every member of `restored` equals `original`'s.
    static func expectSame(_ restored: CacheEntry?, _ original: CacheEntry) {
        #expect(restored?.key == original.key)
        #expect(restored?.kind == original.kind)
        #expect(restored?.status == original.status)
        #expect(restored?.body == original.body)
        #expect(restored?.etag == original.etag)
        #expect(restored?.gzipped == original.gzipped)
        #expect(restored?.gzippedETag == original.gzippedETag)
        #expect(restored?.details == original.details)
        #expect(restored?.message == original.message)
        #expect(restored?.storedAt == original.storedAt)
        #expect(restored?.freshUntil == original.freshUntil)
        #expect(restored?.staleUntil == original.staleUntil)
        #expect(restored?.revalidateUntil == original.revalidateUntil)
    }

    @Test func anEntryStoredIsReadBackWholeAfterReopening() throws {
        let directory = TemporaryDirectory()
        let object = Self.entry(7)
        let list = CacheEntry(
            key: "/public/collection/v1/search?q=cat", kind: .search, status: 200,
            body: Array(#"{"total":3,"objectIDs":[3,1,2]}"#.utf8), storedAt: 5, policy: Self.policy,
            details: .ids(IDList(total: 3, ids: [3, 1, 2])))
        let missing = CacheEntry(
            key: "/public/collection/v1/objects/9", kind: .object, status: 404,
            body: Array(#"{"message":"Not a valid object"}"#.utf8), storedAt: 5, policy: Self.policy,
            message: "Not a valid object")
        do {
            let disk = try Self.open(directory)
            for entry in [object, list, missing] { disk.store(entry) }
            disk.close()
            #expect(disk.statistics.writes == 3)
        }
        let reopened = try Self.open(directory)
        defer { reopened.close() }
        for entry in [object, list, missing] { Self.expectSame(reopened.entry(for: entry.key), entry) }
        #expect(reopened.entry(for: "/public/collection/v1/objects/8") == nil)
        let figures = reopened.statistics
        #expect((figures.hits, figures.misses, figures.corrupt) == (3, 1, 0))
    }

    @Test(arguments: ["", "objects/7", "Kōrin’s “Irises”", String(repeating: "x", count: 5_000)])
    func aTextIsBoundAsItsOwnBytesAndAnEmptyOneIsNotNull(text: String) throws {
        let connection = try SQLiteConnection(path: ":memory:", create: true)
        let statement = try connection.prepare("SELECT typeof(?1), length(CAST(?1 AS BLOB)), ?1")
        try statement.bind(.text(text))
        #expect(try statement.step())
        #expect(statement.text(at: 0) == "text")
        #expect(statement.integer(at: 1) == Int64(text.utf8.count))
        #expect(statement.text(at: 2) == text)
        statement.reset()
    }

    @Test func aQueuedEntryIsReadBeforeItReachesTheDiskAndARemovalAtOnce() throws {
        let directory = TemporaryDirectory()
        let disk = try Self.open(directory)
        defer { disk.close() }
        let object = Self.entry(1)
        disk.store(object)
        #expect(disk.entry(for: object.key) === object)
        disk.flush()
        #expect(disk.remove(object.key))
        #expect(disk.entry(for: object.key) == nil)
        #expect(!disk.remove(object.key))  // queued removal: nothing left to remove
        disk.flush()
        let reopened = try Self.open(directory)
        defer { reopened.close() }
        #expect(reopened.entry(for: object.key) == nil)
        #expect(!reopened.remove(object.key))
    }

    @Test func aRowWithAFlippedByteIsAMissThatIsCountedLoggedAndRemoved() throws {
        let directory = TemporaryDirectory()
        let object = Self.entry(3)
        let disk = try Self.open(directory)
        defer { disk.close() }
        disk.store(object)
        disk.flush()
        // Flip one byte in the middle of the stored record, as a damaged sector would.
        try Self.withConnection(directory) { db in
            let count = sqlite3_exec(
                db, "UPDATE entries SET record = substr(record, 1, 500) || X'00' || substr(record, 502)", nil, nil, nil)
            #expect(count == SQLITE_OK)
        }
        let log = MemoryLog()
        let reopened = try Self.open(directory, log: log)
        defer { reopened.close() }
        #expect(reopened.entry(for: object.key) == nil)
        #expect(!reopened.remove(object.key))
        #expect(reopened.statistics.corrupt == 1)
        #expect(log.lines.contains { $0.contains("damaged") && $0.contains(object.key) })
        reopened.flush()
        #expect(reopened.entry(for: object.key) == nil)
        #expect(reopened.statistics.misses == 1)
    }

    @Test func aRecordWhoseTimesAreNotFiniteIsRefusedThoughItsChecksumHolds() {
        for time in [Double.nan, .infinity, -.infinity] {
            let forged = Self.entry(7, storedAt: time)
            #expect(CacheEntry.restored(record: forged.record, key: forged.key) == nil, "\(time)")
        }
    }

    @Test func aCacheFileThatHasEverythingIsOpenedWhileAnotherProcessHoldsTheWriteLock() throws {
        let directory = TemporaryDirectory()
        try Self.open(directory).close()
        try Self.withConnection(directory) { db in
            #expect(sqlite3_exec(db, "BEGIN IMMEDIATE", nil, nil, nil) == SQLITE_OK)
            // Had the open asked for the write lock, it would have failed after the busy timeout.
            let disk = DiskCache.open(directory: directory.path, capacity: 1 << 30, logger: MemoryLog().logger())
            #expect(disk != nil)
            #expect(sqlite3_exec(db, "ROLLBACK", nil, nil, nil) == SQLITE_OK)
            disk?.close()
        }
    }

    @Test(arguments: [0, 1, 100, 1_000])
    func aTruncatedRecordIsRefused(keeping bytes: Int) {
        let record = Self.entry(4).record
        #expect(CacheEntry.restored(record: Array(record.prefix(bytes)), key: Self.entry(4).key) == nil)
        #expect(CacheEntry.restored(record: record, key: "/public/collection/v1/objects/5") == nil)
        #expect(CacheEntry.restored(record: record, key: Self.entry(4).key) != nil)
    }

    @Test func aFileThatIsNotADatabaseIsMovedAsideAndANewOneMade() throws {
        let directory = TemporaryDirectory()
        let path = directory.path + "/cache.sqlite"
        let garbage = Data(repeating: 0x5A, count: 8_192)
        try garbage.write(to: URL(fileURLWithPath: path))
        let log = MemoryLog()
        let disk = try Self.open(directory, log: log)
        defer { disk.close() }
        disk.store(Self.entry(1))
        disk.flush()
        #expect(disk.entry(for: Self.entry(1).key) != nil)
        let aside = try #require(
            directory.files.first {
                $0.hasPrefix("cache.sqlite.corrupt-") && !$0.hasSuffix("-shm") && !$0.hasSuffix("-wal")
            })
        #expect(FileManager.default.contents(atPath: directory.path + "/" + aside) == garbage)
        #expect(log.lines.contains { $0.contains("moved it to") })
    }

    @Test func aDatabaseOfAnotherSchemaVersionIsMovedAside() throws {
        let directory = TemporaryDirectory()
        try Self.withConnection(directory) { db in
            #expect(sqlite3_exec(db, "CREATE TABLE t (x); PRAGMA user_version = 1", nil, nil, nil) == SQLITE_OK)
        }
        let log = MemoryLog()
        try Self.open(directory, log: log).close()
        #expect(directory.files.contains { $0.hasPrefix("cache.sqlite.corrupt-") })
        #expect(log.lines.contains { $0.contains("another program") })
    }

    @Test func aPathThatCannotBeOpenedTurnsTheTierOffWithAReasonAndLeavesItAlone() throws {
        let directory = TemporaryDirectory()
        // A directory where the file should be: SQLite cannot open it, whoever runs the test.
        try FileManager.default.createDirectory(
            atPath: directory.path + "/cache.sqlite", withIntermediateDirectories: false)
        let log = MemoryLog()
        #expect(DiskCache.open(directory: directory.path, capacity: 1 << 20, logger: log.logger()) == nil)
        #expect(log.lines.contains { $0.contains("persistent cache off") && $0.contains("cache.sqlite") })
        #expect(directory.files == ["cache.sqlite"])
    }

    @Test func pastItsBoundTheLeastRecentlyUsedRowsAreEvicted() throws {
        let directory = TemporaryDirectory()
        let capacity = 1 << 20
        let disk = try Self.open(directory, capacity: capacity)
        defer { disk.close() }
        try Self.waitForCount(disk)
        for id in 1...100 { disk.store(Self.entry(id, size: 10_000)) }
        disk.flush()
        // Reading the first entry marks it used: it outlives the others stored with it.
        #expect(disk.entry(for: Self.entry(1).key) != nil)
        disk.flush()
        for id in 101...150 { disk.store(Self.entry(id, size: 10_000)) }
        disk.flush()
        let figures = disk.statistics
        #expect(try #require(figures.bytes) <= capacity)
        #expect(figures.evictions > 0)
        #expect(figures.entries == 150 - figures.evictions)
        #expect(disk.entry(for: Self.entry(1).key) != nil)
        #expect(disk.entry(for: Self.entry(2).key) == nil)
        #expect(disk.entry(for: Self.entry(150).key) != nil)
        let reopened = try Self.open(directory, capacity: capacity)
        defer { reopened.close() }
        try Self.waitForCount(reopened)
        #expect(reopened.statistics.entries == figures.entries)
        #expect(reopened.statistics.bytes == figures.bytes)
    }

    @Test func aReadMarksItsRowOnlyWhenTheRowIsInTheOlderHalfOfTheMarks() throws {
        let directory = TemporaryDirectory()
        let disk = try Self.open(directory)
        try Self.waitForCount(disk)
        for id in 1...100 { disk.store(Self.entry(id, size: 500)) }
        disk.flush()
        // Stored in order: marks 1 … 100. Row 90 is in the newer half, row 10 in the older.
        #expect(disk.entry(for: Self.entry(90).key) != nil)
        #expect(disk.entry(for: Self.entry(10).key) != nil)
        disk.flush()
        disk.close()
        var marks: [Int64: Int64] = [:]
        try Self.withConnection(directory) { db in
            var statement: OpaquePointer?
            #expect(sqlite3_prepare_v2(db, "SELECT key, used_at FROM entries", -1, &statement, nil) == SQLITE_OK)
            defer { sqlite3_finalize(statement) }
            while sqlite3_step(statement) == SQLITE_ROW {
                let key = String(cString: sqlite3_column_text(statement, 0))
                marks[Int64(key.split(separator: "/").last!)!] = sqlite3_column_int64(statement, 1)
            }
        }
        #expect(marks[90] == 90)  // left as stored: rewriting its pages would buy nothing
        #expect(marks[10] == 101)  // now the newest
        #expect(marks.values.filter { $0 > 100 }.count == 1)
    }

    @Test func aLoopReadThatWaitedForTheDeviceSendsTheNextReadsToTasks() throws {
        let directory = TemporaryDirectory()
        let log = MemoryLog()
        do {
            let disk = try Self.open(directory)
            for id in 1...200 { disk.store(Self.entry(id, size: 3_000)) }
            disk.close()
        }
        // Out of the page cache: the file is synced, then its pages dropped, so that the next reads
        // must wait for the device (the temporary directory is on a disk, not a tmpfs).
        let descriptor = Glibc.open(directory.path + "/cache.sqlite", O_RDONLY)
        #expect(descriptor >= 0)
        #expect(fsync(descriptor) == 0)
        #expect(posix_fadvise(descriptor, 0, 0, POSIX_FADV_DONTNEED) == 0)
        Glibc.close(descriptor)
        let disk = try Self.open(directory, log: log)
        defer { disk.close() }
        // The first read waits for the device, and still answers.
        Self.expectSame(disk.entryAtOnce(for: Self.entry(1).key).entry, Self.entry(1, size: 3_000))
        // The next ones, even of pages the page cache now holds, are left to tasks for a second.
        #expect(disk.entryAtOnce(for: Self.entry(1).key).isDeclined)
        #expect(disk.entryAtOnce(for: Self.entry(150).key).isDeclined)
        Self.expectSame(disk.entry(for: Self.entry(150).key), Self.entry(150, size: 3_000))
    }

    @Test func aLoopReadFromThePageCacheAnswersAndAMissIsLeftToTheTaskToCount() throws {
        let directory = TemporaryDirectory()
        let disk = try Self.open(directory)
        defer { disk.close() }
        try Self.waitForCount(disk)
        disk.store(Self.entry(1))
        disk.flush()
        #expect(disk.entry(for: Self.entry(1).key) != nil)  // its pages now in the page cache
        for _ in 0..<3 { Self.expectSame(disk.entryAtOnce(for: Self.entry(1).key).entry, Self.entry(1)) }
        guard case .absent = disk.entryAtOnce(for: Self.entry(2).key) else {
            Issue.record("a key never stored is not read as absent")
            return
        }
        #expect(disk.statistics.hits == 4)
        #expect(disk.statistics.misses == 0)
    }

    /// The task after a loop read that found no row takes that absence (counted once), unless the
    /// key was stored or removed since: what this process stores is never missed.
    @Test func aTaskTakesTheLoopsAbsenceUnlessTheKeyWasStoredSince() throws {
        let directory = TemporaryDirectory()
        let disk = try Self.open(directory)
        defer { disk.close() }
        try Self.waitForCount(disk)
        // Another process (a second connection to the file) stores a row after the loop's read:
        // the task does not ask SQLite again, and the miss is counted once.
        guard case .absent = disk.entryAtOnce(for: Self.entry(3).key) else {
            Issue.record("a key never stored is not read as absent")
            return
        }
        let other = try Self.open(directory)
        other.store(Self.entry(3))
        other.close()
        #expect(disk.entry(for: Self.entry(3).key) == nil)
        #expect(disk.statistics.misses == 1)
        // Taken once: the next read asks SQLite, and finds the row.
        Self.expectSame(disk.entry(for: Self.entry(3).key), Self.entry(3))
        // Stored by this process after the loop's read, and written out: read, not missed.
        guard case .absent = disk.entryAtOnce(for: Self.entry(4).key) else {
            Issue.record("a key never stored is not read as absent")
            return
        }
        disk.store(Self.entry(4))
        disk.flush()
        Self.expectSame(disk.entry(for: Self.entry(4).key), Self.entry(4))
        #expect(disk.statistics.misses == 1)
    }

    /// Waits (at most 5 s) until the writer has counted the rows at start-up.
    private static func waitForCount(_ disk: DiskCache) throws {
        for _ in 0..<500 where disk.statistics.bytes == nil { usleep(10_000) }
        #expect(disk.statistics.bytes != nil)
    }

    /// Runs `body` with a plain SQLite connection to the directory's `cache.sqlite`.
    private static func withConnection(_ directory: TemporaryDirectory, _ body: (OpaquePointer) throws -> Void) throws {
        try withDatabase(at: directory.path + "/cache.sqlite", body)
    }

    /// `body` with a connection of its own to the SQLite file at `path`, closed after.
    static func withDatabase(at path: String, _ body: (OpaquePointer) throws -> Void) throws {
        var db: OpaquePointer?
        #expect(sqlite3_open(path, &db) == SQLITE_OK)
        defer { sqlite3_close(db) }
        try body(try #require(db))
    }
}

extension AtOnceRead {
    /// Whether the tier left the read to a task.
    fileprivate var isDeclined: Bool {
        guard case .declined = self else { return false }
        return true
    }
}
