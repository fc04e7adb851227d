import CSQLite
import Foundation
import MetEngine
import TestKit
import Testing

@testable import MetDisk

/// `themet export` and `themet import`: a snapshot holds every verified record of a cache, and is
/// merged into another whole (newer entries win) or refused whole.
@Suite("Snapshots of the records' tier")
struct SnapshotTests {
    /// A cache of `ids`' entries (stored at `storedAt`) in `directory`, closed.
    private static func cache(_ directory: TemporaryDirectory, _ ids: ClosedRange<Int>, storedAt: Double = 1_000) throws
    {
        let disk = try DiskCacheTests.open(directory)
        for id in ids { disk.store(DiskCacheTests.entry(id, storedAt: storedAt)) }
        disk.close()
    }

    private static func export(_ directory: TemporaryDirectory, to file: String, pictures: Bool = false) throws
        -> SnapshotManifest
    {
        try CacheSnapshot.export(
            directory: directory.path, to: file, createdBy: "themet test", at: 5_000, syncStartedAt: 4_000,
            pictures: pictures, progress: { _, _ in })
    }

    /// Pictures stored in `directory`'s picture files, which are closed again.
    private static func store(_ pictures: [CacheEntry], in directory: TemporaryDirectory) throws {
        let tier = try ImageFileTierTests.open(directory)
        for picture in pictures { tier.store(picture) }
        tier.close()
    }

    /// Imports the snapshot `file` into `directory`'s cache and picture files, within `maxPixels`.
    private static func importing(_ file: String, into directory: TemporaryDirectory, maxPixels: Int = 50_000_000)
        throws -> SnapshotImport
    {
        let disk = try DiskCacheTests.open(directory)
        defer { disk.close() }
        let pictures = try ImageFileTierTests.open(directory)
        defer { pictures.close() }
        return try CacheSnapshot.importing(
            CacheSnapshot.verify(file, progress: { _, _ in }), into: disk,
            pictures: PictureTarget(tier: pictures, maxPixels: maxPixels, maxBytes: 1 << 20), progress: { _, _ in })
    }

    @Test func anImportIntoAnEmptyDirectoryHoldsEveryVerifiedRecordAsItWas() throws {
        let (source, target, files) = (TemporaryDirectory(), TemporaryDirectory(), TemporaryDirectory())
        try Self.cache(source, 1...50)
        // One row damaged in the source: left out of the snapshot, never carried on.
        try DiskCacheTests.withDatabase(at: source.path + "/cache.sqlite") { db in
            let sql =
                "UPDATE entries SET record = substr(record, 1, 500) || X'00' || substr(record, 502) WHERE key LIKE '%/7'"
            #expect(sqlite3_exec(db, sql, nil, nil, nil) == SQLITE_OK)
        }
        let file = files.path + "/cache.snapshot"
        let manifest = try Self.export(source, to: file)
        #expect(manifest.records == 49)
        #expect(manifest.format == 1)
        #expect(manifest.createdAt == 5_000)
        #expect(manifest.syncStartedAt == 4_000)
        #expect(try FileManager.default.contentsOfDirectory(atPath: files.path) == ["cache.snapshot"])
        let verified = try CacheSnapshot.verify(file, progress: { _, _ in })
        #expect(verified == VerifiedSnapshot(file: file, manifest: manifest))

        let disk = try DiskCacheTests.open(target)
        defer { disk.close() }
        var reports: [(Int, Int)] = []
        let report = try CacheSnapshot.importing(verified, into: disk, progress: { reports.append(($0, $1)) })
        #expect(report == SnapshotImport(manifest: manifest, stored: 49, kept: 0))
        #expect(reports.last.map { [$0.0, $0.1] } == [49, 49])
        for id in 1...50 where id != 7 {
            DiskCacheTests.expectSame(disk.entry(for: "/public/collection/v1/objects/\(id)"), DiskCacheTests.entry(id))
        }
        #expect(disk.entry(for: "/public/collection/v1/objects/7") == nil)
    }

    @Test func whereBothHoldAKeyTheLaterStoredEntryStays() throws {
        let (source, target, files) = (TemporaryDirectory(), TemporaryDirectory(), TemporaryDirectory())
        try Self.cache(source, 1...3, storedAt: 1_000)
        let file = files.path + "/s"
        _ = try Self.export(source, to: file)
        let disk = try DiskCacheTests.open(target)
        defer { disk.close() }
        disk.store(DiskCacheTests.entry(1, size: 3_000, storedAt: 2_000))  // newer: kept
        disk.store(DiskCacheTests.entry(2, size: 3_000, storedAt: 1_000))  // as new: kept
        disk.store(DiskCacheTests.entry(3, size: 3_000, storedAt: 500))  // older: replaced
        disk.flush()
        let report = try CacheSnapshot.importing(
            CacheSnapshot.verify(file, progress: { _, _ in }), into: disk, progress: { _, _ in })
        #expect(report.stored == 1)
        #expect(report.kept == 2)
        #expect(disk.entry(for: "/public/collection/v1/objects/1")?.storedAt == 2_000)
        #expect(disk.entry(for: "/public/collection/v1/objects/2")?.body.count == 3_000)
        DiskCacheTests.expectSame(disk.entry(for: "/public/collection/v1/objects/3"), DiskCacheTests.entry(3))
    }

    /// Each spoils a good snapshot in its own way; `expected` names the error's kind.
    @Test(arguments: [
        ("a record's byte flipped", "damaged"), ("a row taken out", "damaged"), ("the manifest's count", "damaged"),
        ("cut in half", "damaged"), ("not SQLite", "notASnapshot"), ("another program's database", "notASnapshot"),
        ("a cache, not a snapshot", "notASnapshot"), ("a format from the future", "unsupported"),
    ])
    func aSpoiledFileIsRefusedAndTheTargetIsLeftAsItWas(spoiled: String, expected: String) throws {
        let (source, target, files) = (TemporaryDirectory(), TemporaryDirectory(), TemporaryDirectory())
        try Self.cache(source, 1...20)
        let file = files.path + "/s"
        _ = try Self.export(source, to: file)
        func update(_ sql: String) throws {
            try DiskCacheTests.withDatabase(at: file) { #expect(sqlite3_exec($0, sql, nil, nil, nil) == SQLITE_OK) }
        }
        switch spoiled {
        case "a record's byte flipped":
            try update(
                "UPDATE entries SET record = substr(record, 1, 900) || X'01' || substr(record, 902) WHERE rowid = 5")
        case "a row taken out": try update("DELETE FROM entries WHERE rowid = 9")
        case "the manifest's count":
            try update("UPDATE manifest SET json = replace(json, '\"records\":20', '\"records\":21')")
        case "cut in half":
            let bytes = try #require(FileManager.default.contents(atPath: file))
            try bytes.prefix(bytes.count / 2).write(to: URL(fileURLWithPath: file))
        case "not SQLite": try Data(repeating: 0x41, count: 10_000).write(to: URL(fileURLWithPath: file))
        case "another program's database":
            try FileManager.default.removeItem(atPath: file)
            try update("CREATE TABLE entries (key, record); CREATE TABLE manifest (json)")
        case "a cache, not a snapshot":
            try FileManager.default.removeItem(atPath: file)
            try FileManager.default.copyItem(atPath: source.path + "/cache.sqlite", toPath: file)
        default: try update("UPDATE manifest SET json = replace(json, '\"format\":1', '\"format\":2')")
        }
        let disk = try DiskCacheTests.open(target)
        defer { disk.close() }
        disk.store(DiskCacheTests.entry(30))
        disk.flush()
        do {
            _ = try CacheSnapshot.importing(
                CacheSnapshot.verify(file, progress: { _, _ in }), into: disk, progress: { _, _ in })
            Issue.record("\(spoiled): imported")
        } catch {
            let kind =
                switch error {
                case .damaged: "damaged"
                case .notASnapshot: "notASnapshot"
                case .unsupported: "unsupported"
                default: "\(error)"
                }
            #expect(kind == expected, "\(spoiled): \(error)")
        }
        #expect(disk.statistics.writes == 1, "\(spoiled)")
        for id in 1...20 { #expect(disk.entry(for: "/public/collection/v1/objects/\(id)") == nil) }
    }

    @Test func picturesTravelWhenAskedForAndAreJudgedAsTheImageHostsAreOnTheWayIn() throws {
        let (source, target, files) = (TemporaryDirectory(), TemporaryDirectory(), TemporaryDirectory())
        try Self.cache(source, 1...5)
        let good = (1...3).map { ImageFileTierTests.picture("good\($0)", size: 2_000 * $0) }
        let giant = ImageFileTierTests.picture("giant", width: 100_000, height: 100_000)
        let torn = ImageFileTierTests.picture("torn")
        let missing = CacheEntry(
            key: "/CRDImages/ep/web-large/missing.jpg", kind: .image, status: 404, body: [], etag: "\"404\"",
            gzipped: nil, message: nil, details: .none, storedAt: 1_000, freshUntil: 1_100, staleUntil: 1_200,
            revalidateUntil: 1_150)
        // A picture whose details lie about its size, under a record made anew: refused on import.
        var lying = ImageFileTierTests.picture("lying")
        lying = CacheEntry(
            key: lying.key, kind: .image, status: 200, body: lying.body, etag: lying.etag, gzipped: nil,
            message: nil,
            details: .image(
                ImageDetails(contentType: "image/png", width: 10, height: 10, upstream: UpstreamValidators())),
            storedAt: 1_000, freshUntil: 1_100, staleUntil: 1_200, revalidateUntil: 1_150)
        try Self.store(good + [giant, torn, missing, lying], in: source)
        // A file changed since it was stored: left out of the snapshot.
        let tornFile = ImageFileTierTests.file(of: torn, in: source)
        var bytes = try #require(FileManager.default.contents(atPath: tornFile))
        bytes[100] ^= 0xFF
        try bytes.write(to: URL(fileURLWithPath: tornFile))

        let without = try Self.export(source, to: files.path + "/records-only")
        #expect(without.pictures == nil)
        let file = files.path + "/with-pictures"
        let manifest = try Self.export(source, to: file, pictures: true)
        #expect(manifest.records == 5)
        let pictures = try #require(manifest.pictures)
        #expect(pictures.records == 6)
        #expect(pictures.bytes > 12_000 + 10_000 * 2)
        #expect(try CacheSnapshot.verify(file, progress: { _, _ in }).manifest == manifest)

        // The target already holds a newer copy of one; the rest are stored, but the giant and
        // the liar, which no fetch from the image host would have stored.
        let newer = ImageFileTierTests.picture("good1", size: 3_000, storedAt: 2_000, fill: 9)
        try Self.store([newer], in: target)
        let report = try Self.importing(file, into: target)
        #expect(report.stored == 5)
        #expect(report.pictures == SnapshotImport.Pictures(stored: 3, kept: 1, refused: 2))
        let tier = try ImageFileTierTests.open(target)
        defer { tier.close() }
        #expect(tier.entry(for: newer.key)?.body == newer.body)
        for picture in good.dropFirst() + [missing] {
            let held = try #require(tier.entry(for: picture.key), "\(picture.key)")
            #expect(held.body == picture.body && held.etag == picture.etag && held.details == picture.details)
            #expect(held.storedAt == picture.storedAt && held.freshUntil == picture.freshUntil)
        }
        for refused in [giant, torn, lying] { #expect(tier.entry(for: refused.key) == nil, "\(refused.key)") }
    }

    /// Each spoils the pictures of a good snapshot in its own way: refused whole, nothing changed.
    @Test(arguments: ["a picture's byte flipped", "its pictures dropped", "pictures its manifest does not list"])
    func aSnapshotWhosePicturesAreSpoiledIsRefused(spoiled: String) throws {
        let (source, target, files) = (TemporaryDirectory(), TemporaryDirectory(), TemporaryDirectory())
        try Self.cache(source, 1...3)
        try Self.store((1...3).map { ImageFileTierTests.picture("p\($0)") }, in: source)
        let file = files.path + "/s"
        _ = try Self.export(source, to: file, pictures: true)
        let sql =
            switch spoiled {
            case "a picture's byte flipped":
                "UPDATE pictures SET record = substr(record, 1, 5000) || X'01' || substr(record, 5002) WHERE rowid = 2"
            case "its pictures dropped": "DROP TABLE pictures"
            default: #"UPDATE manifest SET json = json_remove(json, '$.pictures')"#
            }
        try DiskCacheTests.withDatabase(at: file) { #expect(sqlite3_exec($0, sql, nil, nil, nil) == SQLITE_OK) }
        #expect(throws: SnapshotError.self, "\(spoiled)") { try Self.importing(file, into: target) }
        let disk = try DiskCacheTests.open(target)
        defer { disk.close() }
        #expect(disk.statistics.writes == 0)
        let tier = try ImageFileTierTests.open(target)
        defer { tier.close() }
        #expect(tier.statistics.entries == 0)
    }
}
