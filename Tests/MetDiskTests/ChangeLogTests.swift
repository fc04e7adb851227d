import CSQLite
import Foundation
import MetEngine
import TestKit
import Testing

@testable import MetDisk

/// The change log behind `GET /changes`: an object's record listed when it is stored anew, changed
/// or withdrawn, never when it is stored again over itself; pages with cursors that survive a
/// restart; a bounded log whose lost cursors are refused.
@Suite("The persistent tier's change log")
struct ChangeLogTests {
    private static let policy = FreshnessPolicy()

    /// A 404 for object `id`, fetched at `storedAt`.
    private static func withdrawn(_ id: Int, storedAt: Double = 3_000) -> CacheEntry {
        CacheEntry(
            key: "/public/collection/v1/objects/\(id)", kind: .object, status: 404,
            body: Array(#"{"message":"ObjectID not found"}"#.utf8), storedAt: storedAt, policy: policy,
            message: "ObjectID not found")
    }

    /// Every change from `start`, page after page of `limit`; the last page's `next`.
    private static func all(_ disk: DiskCache, from start: ChangeStart = .oldest, limit: Int = 100) throws
        -> (changes: [ObjectChange], next: ChangeCursor)
    {
        var changes: [ObjectChange] = []
        var start = start
        for _ in 0..<1_000 {
            guard case .changes(let page, let next, let more)? = try disk.changes(from: start, limit: limit) else {
                Issue.record("no page from \(start)")
                break
            }
            changes += page
            if !more { return (changes, next) }
            start = .after(next)
        }
        throw CancellationError()
    }

    /// `(objectID, kind)` of each change.
    private static func listed(_ changes: [ObjectChange]) -> [String] {
        changes.map { "\($0.objectID) \($0.kind.name)" }
    }

    @Test func aRecordIsListedWhenStoredAnewChangedOrWithdrawnAndNeverWhenStoredOverItself() throws {
        let directory = TemporaryDirectory()
        let disk = try DiskCacheTests.open(directory)
        defer { disk.close() }
        let first = DiskCacheTests.entry(7, size: 2_000, storedAt: 1_000)
        disk.store(first)
        disk.store(DiskCacheTests.entry(8, storedAt: 1_001))
        disk.flush()
        // The same bytes over themselves: a refresh that found the record unchanged, an expiry.
        disk.store(DiskCacheTests.entry(7, size: 2_000, storedAt: 1_500))
        disk.store(first.expired(at: 1_600))
        disk.flush()
        // Not objects, or never held: nothing.
        disk.store(
            CacheEntry(
                key: "/public/collection/v1/search?q=cat", kind: .search, status: 200,
                body: Array(#"{"total":1,"objectIDs":[7]}"#.utf8), storedAt: 5, policy: Self.policy))
        disk.store(Self.withdrawn(9))
        disk.flush()
        disk.store(DiskCacheTests.entry(7, size: 2_100, storedAt: 2_000))
        disk.store(Self.withdrawn(8, storedAt: 3_000))
        disk.flush()
        disk.store(Self.withdrawn(8, storedAt: 3_100))
        disk.store(DiskCacheTests.entry(8, storedAt: 4_000))
        disk.flush()
        // Purged, then fetched again: the tier holds it anew.
        _ = disk.remove(first.key)
        disk.flush()
        disk.store(first)
        disk.flush()

        let (changes, next) = try Self.all(disk)
        #expect(Self.listed(changes) == ["7 stored", "8 stored", "7 changed", "8 withdrawn", "8 stored", "7 stored"])
        #expect(changes.map(\.fetchedAt) == [1_000, 1_001, 2_000, 3_000, 4_000, 1_000])
        #expect(changes.map(\.sequence) == [1, 2, 3, 4, 5, 6])
        #expect(next.sequence == 6)
    }

    @Test func pagesFollowEachOtherAndACursorOutlivesARestart() throws {
        let directory = TemporaryDirectory()
        var next: ChangeCursor
        do {
            let disk = try DiskCacheTests.open(directory)
            for id in 1...5 { disk.store(DiskCacheTests.entry(id)) }
            disk.flush()
            guard case .changes(let page, let after, true)? = try disk.changes(from: .oldest, limit: 2) else {
                Issue.record("the first page says no more follow")
                return
            }
            #expect(page.map(\.objectID) == [1, 2])
            #expect(try Self.all(disk, from: .after(after), limit: 2).changes.map(\.objectID) == [3, 4, 5])
            guard case .changes([], let latest, false)? = try disk.changes(from: .latest, limit: 2) else {
                Issue.record("latest is not an empty page")
                return
            }
            #expect(latest.sequence == 5)
            next = latest
            disk.close()
        }
        let disk = try DiskCacheTests.open(directory)
        defer { disk.close() }
        #expect(try disk.changes(from: .after(next), limit: 10) == .changes([], next: next, more: false))
        disk.store(DiskCacheTests.entry(6))
        disk.flush()
        #expect(try Self.all(disk, from: .after(next)).changes.map(\.objectID) == [6])
    }

    @Test func pastItsBoundTheLogDropsItsOldestAndRefusesTheCursorsThatReachedThem() throws {
        let directory = TemporaryDirectory()
        let disk = try #require(
            DiskCache.open(
                directory: directory.path, capacity: 1 << 30, changeRetention: 10, logger: MemoryLog().logger()))
        defer { disk.close() }
        for id in 1...11 {
            disk.store(DiskCacheTests.entry(id))
            disk.flush()
        }
        let start = try Self.all(disk)
        #expect(start.changes.map(\.objectID) == Array(1...11))
        let log = start.next.log
        disk.store(DiskCacheTests.entry(12))
        disk.flush()
        // 12 kept is past 10 and a tenth: down to the newest 10.
        #expect(try Self.all(disk).changes.map(\.objectID) == Array(3...12))
        #expect(
            try Self.all(disk, from: .after(ChangeCursor(log: log, sequence: 2))).changes.map(\.objectID)
                == Array(3...12))
        for lost in [0, 1] {
            let page = try disk.changes(from: .after(ChangeCursor(log: log, sequence: Int64(lost))), limit: 5)
            #expect(page?.isExpired == true, "a cursor at \(lost)")
        }
        #expect(try disk.changes(from: .after(ChangeCursor(log: log, sequence: 13)), limit: 5)?.isExpired == true)
        let other = log == "0000000000000000" ? "0000000000000001" : "0000000000000000"
        #expect(try disk.changes(from: .after(ChangeCursor(log: other, sequence: 5)), limit: 5)?.isExpired == true)
    }

    @Test func aCacheFileOfAnEarlierBuildGainsTheLogWhenOpenedAndASnapshotCarriesNone() throws {
        let (directory, files) = (TemporaryDirectory(), TemporaryDirectory())
        do {
            let disk = try DiskCacheTests.open(directory)
            for id in [1, 3, 4] { disk.store(DiskCacheTests.entry(id)) }
            disk.store(Self.withdrawn(5))
            disk.close()
        }
        try DiskCacheTests.withDatabase(at: directory.path + "/cache.sqlite") { db in
            let sql =
                ChangeLog.tableNames.map { "DROP TABLE \($0);" }.joined() + "ALTER TABLE entries DROP COLUMN etag;"
            #expect(sqlite3_exec(db, sql, nil, nil, nil) == SQLITE_OK)
        }
        let disk = try DiskCacheTests.open(directory)
        DiskCacheTests.expectSame(disk.entry(for: DiskCacheTests.entry(1).key), DiskCacheTests.entry(1))
        // The earlier build's rows carry no version: it is read from their records.
        disk.store(DiskCacheTests.entry(1))
        disk.store(Self.withdrawn(3))
        disk.store(DiskCacheTests.entry(4, size: 2_500))
        disk.store(Self.withdrawn(5))
        disk.store(DiskCacheTests.entry(2))
        disk.close()
        let reopened = try DiskCacheTests.open(directory)
        #expect(try Self.listed(Self.all(reopened).changes) == ["3 withdrawn", "4 changed", "2 stored"])
        reopened.close()

        let file = files.path + "/cache.snapshot"
        _ = try CacheSnapshot.export(
            directory: directory.path, to: file, createdBy: "themet test", at: 5_000, syncStartedAt: nil,
            progress: { _, _ in })
        try DiskCacheTests.withDatabase(at: file) { db in
            var statement: OpaquePointer?
            #expect(
                sqlite3_prepare_v2(
                    db, "SELECT group_concat(name) FROM sqlite_schema WHERE type = 'table'", -1, &statement, nil)
                    == SQLITE_OK)
            defer { sqlite3_finalize(statement) }
            #expect(sqlite3_step(statement) == SQLITE_ROW)
            #expect(String(cString: sqlite3_column_text(statement, 0)) == "entries,manifest")
        }
    }

    @Test(arguments: [
        ("0123456789abcdef-0", true), ("0123456789abcdef-42", true), ("0123456789abcdef-999999999999999999", true),
        ("0123456789abcdef-9223372036854775807", false),
        ("0123456789abcdef-9223372036854775808", false), ("0123456789ABCDEF-1", false), ("0123456789abcde-1", false),
        ("0123456789abcdef0-1", false), ("0123456789abcdef-", false), ("0123456789abcdef-01", false),
        ("0123456789abcdef-+1", false), ("0123456789abcdef--1", false), ("0123456789abcdef-1-2", false),
        ("0123456789abcdeg-1", false), ("", false), ("-1", false), ("0123456789abcdef 1", false),
    ])
    func aCursorIsReadOnlyAsItIsWritten(text: String, valid: Bool) {
        let cursor = ChangeCursor(text)
        #expect((cursor != nil) == valid)
        if let cursor { #expect(cursor.description == text) }
    }
}

extension ChangePage {
    /// Whether the start was refused.
    fileprivate var isExpired: Bool {
        guard case .expired = self else { return false }
        return true
    }
}
