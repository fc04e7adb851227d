import Foundation
import MetEngine
import TestKit
import Testing

@testable import MetDisk

@Suite("The picture files: whole or not at all, bounded, and never served torn")
struct ImageFileTierTests {
    private static let policy = FreshnessPolicy()

    /// A picture entry of `size` bytes (at least 45) declaring `width` × `height` pixels: a PNG's
    /// signature, `IHDR` and `IEND` around filler, which is all a header's reader looks at (the
    /// tier stores bytes; a resource judges them by their header).
    static func picture(
        _ name: String, size: Int = 10_000, storedAt: Double = 1_000, fill: UInt8 = 7, width: Int = 500,
        height: Int = 400
    ) -> CacheEntry {
        func bigEndian(_ value: Int) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: value >> (24 - 8 * $0)) } }
        let head =
            [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 13] + Array("IHDR".utf8) + bigEndian(width)
            + bigEndian(height) + [8, 2, 0, 0, 0, 0, 0, 0, 0]
        let end: [UInt8] = [0, 0, 0, 0] + Array("IEND".utf8) + [0xAE, 0x42, 0x60, 0x82]
        let body = head + (0..<(size - head.count - end.count)).map { UInt8(truncatingIfNeeded: $0 &* 31) ^ fill } + end
        let details = ImageDetails(
            contentType: "image/png", width: width, height: height,
            upstream: UpstreamValidators(etag: "\"up-\(name)\"", lastModified: "Wed, 23 Oct 2019 00:00:00 GMT"))
        return CacheEntry(
            key: "/CRDImages/ep/web-large/\(name).jpg", kind: .image, status: 200, body: body,
            etag: ETag.strong(for: body), gzipped: nil, message: nil, details: .image(details),
            storedAt: storedAt, freshUntil: storedAt + 100, staleUntil: storedAt + 200, revalidateUntil: storedAt + 150)
    }

    static func open(_ directory: TemporaryDirectory, capacity: Int = 1 << 30, log: MemoryLog = MemoryLog())
        throws -> ImageFileTier
    {
        try #require(ImageFileTier.open(directory: directory.path, capacity: capacity, logger: log.logger()))
    }

    /// The path of `entry`'s file.
    static func file(of entry: CacheEntry, in directory: TemporaryDirectory) -> String {
        directory.path + "/images/files/" + ImageFileTier.fileName(for: entry.key)
    }

    @Test func aPictureIsReadBackWholeAfterReopening() throws {
        let directory = TemporaryDirectory()
        let original = Self.picture("DT1567")
        do {
            let tier = try Self.open(directory)
            tier.store(original)
            #expect(tier.entry(for: original.key)?.body == original.body)  // queued, not yet written
            tier.close()
        }
        let tier = try Self.open(directory)
        let restored = try #require(tier.entry(for: original.key))
        #expect(restored.body == original.body && restored.etag == original.etag)
        #expect(restored.details == original.details && restored.freshUntil == original.freshUntil)
        #expect(tier.statistics.entries == 1 && tier.statistics.bytes == original.body.count)
        #expect(FileManager.default.fileExists(atPath: Self.file(of: original, in: directory)))
    }

    @Test(arguments: ["truncated", "changed", "missing"])
    func aTornChangedOrMissingFileIsAMissCountedAndRemoved(damage: String) throws {
        let directory = TemporaryDirectory()
        let original = Self.picture("DT1947")
        let log = MemoryLog()
        do {
            let writer = try Self.open(directory)
            writer.store(original)
            writer.close()
        }
        // A tier that has not read the file yet (one that wrote or read it trusts it while its
        // identity holds: see the next test).
        let tier = try Self.open(directory, log: log)
        let path = Self.file(of: original, in: directory)
        switch damage {
        case "truncated": try Data(original.body.prefix(100)).write(to: URL(fileURLWithPath: path))
        case "changed": try Data(original.body.map { $0 ^ 1 }).write(to: URL(fileURLWithPath: path))
        default: try FileManager.default.removeItem(atPath: path)
        }
        #expect(tier.entry(for: original.key) == nil)
        #expect(tier.statistics.corrupt == 1)
        tier.flush()
        #expect(tier.entry(for: original.key) == nil)
        #expect(tier.statistics.entries == 0 && tier.statistics.bytes == 0)
        #expect(!FileManager.default.fileExists(atPath: path))
        #expect(log.lines.contains { $0.contains("is not served") })
    }

    @Test func aFileIsHashedOnceUnlessItsIdentityChanges() throws {
        let directory = TemporaryDirectory()
        let original = Self.picture("DT1567", size: 100_000)
        let tier = try Self.open(directory)
        tier.store(original)
        tier.flush()
        let path = Self.file(of: original, in: directory)
        // Rewritten in place, same length, then dated a second later as a later write would be.
        try Data(original.body.map { $0 ^ 1 }).write(to: URL(fileURLWithPath: path))
        var times = [timespec](repeating: timespec(tv_sec: time(nil) + 1, tv_nsec: 0), count: 2)
        #expect(utimensat(AT_FDCWD, path, &times, 0) == 0)
        #expect(tier.openFile(key: original.key, etag: original.etag) == nil)
        #expect(tier.entry(for: original.key) == nil)
        #expect(tier.statistics.corrupt == 1)
    }

    @Test func openFileGivesTheVerifiedFileOfThatVersionOnly() throws {
        let directory = TemporaryDirectory()
        let original = Self.picture("DT1567", size: 100_000)
        do {
            let writer = try Self.open(directory)
            #expect(writer.openFile(key: original.key, etag: original.etag) == nil)  // queued, not yet written
            writer.store(original)
            writer.flush()
            let file = try #require(writer.openFile(key: original.key, etag: original.etag))
            #expect(Self.contents(of: file) == original.body)
            writer.close()
        }
        // Another process: nothing is trusted before a read has hashed the file.
        let tier = try Self.open(directory)
        #expect(tier.openFile(key: original.key, etag: original.etag) == nil)
        #expect(tier.entry(for: original.key)?.body == original.body)
        let file = try #require(tier.openFile(key: original.key, etag: original.etag))
        #expect(Self.contents(of: file) == original.body)
        // Another version of the picture is not this file's.
        let other = Self.picture("DT1567", size: 100_000, fill: 9)
        #expect(tier.openFile(key: other.key, etag: other.etag) == nil)
        // Replaced by a newer version: the older one's file is gone, the newer's is served.
        let newer = Self.picture("DT1567", size: 90_000, storedAt: 2_000, fill: 9)
        tier.store(newer)
        tier.flush()
        #expect(tier.openFile(key: original.key, etag: original.etag) == nil)
        #expect(Self.contents(of: try #require(tier.openFile(key: newer.key, etag: newer.etag))) == newer.body)
        // Removed: nothing to open.
        _ = tier.remove(newer.key)
        tier.flush()
        #expect(tier.openFile(key: newer.key, etag: newer.etag) == nil)
    }

    /// The whole of `file`, read from its start.
    private static func contents(of file: OpenFile) -> [UInt8] {
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let got = pread(file.descriptor, &buffer, buffer.count, off_t(bytes.count))
            guard got > 0 else { return bytes }
            bytes += buffer[..<got]
        }
    }

    @Test func filesAnInterruptedWriteLeftAreRemovedAtStart() throws {
        let directory = TemporaryDirectory()
        let kept = Self.picture("kept")
        do {
            let tier = try Self.open(directory)
            tier.store(kept)
            tier.close()
        }
        let folder = directory.path + "/images/files/ab"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let partial = folder + "/abcdef0123456789.img" + ImageFileTier.temporarySuffix + "3"
        let orphan = folder + "/abcdef0123456789.img"
        for path in [partial, orphan] { try Data([1, 2, 3]).write(to: URL(fileURLWithPath: path)) }
        let tier = try Self.open(directory)
        tier.flush()  // the clean-up runs first on the writer
        #expect(!FileManager.default.fileExists(atPath: partial))
        #expect(!FileManager.default.fileExists(atPath: orphan))
        #expect(tier.entry(for: kept.key)?.body == kept.body)
    }

    @Test func theLeastRecentlyUsedPicturesGoFirstToStayWithinTheCapacity() throws {
        let directory = TemporaryDirectory()
        let tier = try Self.open(directory, capacity: 25_000)
        let first = Self.picture("first", storedAt: 1_000)
        let second = Self.picture("second", storedAt: 2_000)
        tier.store(first)
        tier.store(second)
        tier.flush()
        _ = tier.entry(for: first.key)  // used now: newer than second
        tier.flush()
        let third = Self.picture("third", storedAt: 3_000)
        tier.store(third)
        tier.flush()
        #expect(tier.entry(for: second.key) == nil)
        #expect(tier.entry(for: first.key) != nil && tier.entry(for: third.key) != nil)
        #expect(tier.statistics.evictions == 1 && tier.statistics.bytes == 20_000)
        #expect(!FileManager.default.fileExists(atPath: Self.file(of: second, in: directory)))
    }

    @Test func aNewerVersionReplacesTheFileAndANegativeEntryRemovesIt() throws {
        let directory = TemporaryDirectory()
        let tier = try Self.open(directory)
        let old = Self.picture("DP130999", size: 5_000, fill: 1)
        let new = Self.picture("DP130999", size: 6_000, fill: 2)
        tier.store(old)
        tier.store(new)
        tier.flush()
        #expect(tier.entry(for: new.key)?.body == new.body)
        #expect(tier.statistics.entries == 1 && tier.statistics.bytes == 6_000)
        let gone = CacheEntry(
            key: new.key, kind: .image, status: 404, body: [], etag: ETag.strong(for: []), gzipped: nil,
            message: nil, details: .none, storedAt: 5_000, freshUntil: 6_000, staleUntil: 7_000,
            revalidateUntil: 6_500)
        tier.store(gone)
        tier.flush()
        #expect(tier.entry(for: new.key)?.status == 404)
        #expect(!FileManager.default.fileExists(atPath: Self.file(of: new, in: directory)))
        #expect(tier.remove(new.key))
        tier.flush()
        #expect(tier.entry(for: new.key) == nil && tier.statistics.entries == 0)
    }
}
