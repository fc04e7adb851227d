import Foundation
import Testing

@testable import MetCore
@testable import MetEngine

/// A persistent tier in memory that keeps entries as records (`CacheEntry.record`), as the SQLite
/// tier does, so what comes back is a restored entry, never the one stored. Read in tasks only,
/// unless made `atOnce` (as the SQLite tier's reads are while the page cache holds its file).
final class RecordingTier: PersistentTier {
    private let rows = Locked<[String: [UInt8]]>([:])
    private let reads = Locked(0)
    private let atOnce: Bool
    /// Run by each `remove` before the row goes: what happens meanwhile (a request reading it).
    let beforeRemoval = Locked<(@Sendable () -> Void)?>(nil)

    init(atOnce: Bool = false) {
        self.atOnce = atOnce
    }

    func entry(for key: String) -> CacheEntry? {
        reads.withLock { $0 += 1 }
        return rows.withLock { $0[key] }.flatMap { CacheEntry.restored(record: $0, key: key) }
    }

    func entryAtOnce(for key: String) -> AtOnceRead {
        guard atOnce else { return .declined }
        return entry(for: key).map(AtOnceRead.found) ?? .absent
    }

    func store(_ entry: CacheEntry) { rows.withLock { $0[entry.key] = entry.record } }

    func remove(_ key: String) -> Bool {
        beforeRemoval.withLock { $0 }?()
        return rows.withLock { $0.removeValue(forKey: key) != nil }
    }

    var statistics: PersistentTierStatistics { PersistentTierStatistics() }

    /// Reads so far.
    var readCount: Int { reads.withLock { $0 } }

    /// Keys stored.
    var keys: Set<String> { Set(rows.withLock { $0.keys }) }

    /// Replaces the row of `key` with `bytes` (a damaged row).
    func overwrite(_ key: String, with bytes: [UInt8]) { rows.withLock { $0[key] = bytes } }
}

/// The resolver reads the persistent tier on a memory miss, before the upstream, and writes
/// through it: memory → disk → upstream.
@Suite("The persistent tier under memory")
struct PersistentTierTests {
    /// Objects fresh for 100 s, revalidated for 600 s more, stale-if-error 1,000 s after freshness.
    private static func harness(_ upstream: FakeUpstream = FakeUpstream(), disk: RecordingTier) -> Harness {
        Harness(upstream: upstream, disk: disk) { configuration in
            configuration.upstream.searchAPI = .v1
            configuration.cache.freshness.object = 100
            configuration.cache.freshness.staleWhileRevalidate = 600
            configuration.cache.freshness.staleIfError = 1_000
        }
    }

    @Test func aRestartedServiceAnswersFromTheDiskWithoutTheUpstream() async throws {
        let disk = RecordingTier()
        let first = Self.harness(FakeUpstream([Sample.objectKey(1): .json(Sample.object(1))]), disk: disk)
        let fetched = await first.get("/objects/1")
        #expect(fetched.cacheOutcome == .miss)
        #expect(disk.keys == [Sample.objectKey(1)])

        // A new process: empty memory, an upstream that knows nothing, the same disk.
        let second = Self.harness(disk: disk)
        second.time.advance(by: 30)
        #expect(second.getImmediately("/objects/1") == nil)  // a tier that reads in tasks only
        let restored = await second.get("/objects/1")
        #expect(restored.status == 200)
        #expect(restored.body == fetched.body)
        #expect(restored.headers["ETag"] == fetched.headers["ETag"])
        #expect(restored.headers["Cache-Status"] == "TheMet; hit; ttl=70; detail=disk")
        #expect(restored.headers["Age"] == "30")
        #expect(second.upstream.calls.isEmpty)
        // Now memory holds it.
        #expect(second.getImmediately("/objects/1")?.headers["Cache-Status"] == "TheMet; hit; ttl=70")
        #expect(second.service.engine.cache.statistics.diskHits == 1)
        #expect(second.service.engine.cache.statistics.hits == 1)
    }

    @Test func aTierThatReadsAtOnceAnswersAFreshEntryOnTheLoopWithoutATask() async throws {
        let disk = RecordingTier(atOnce: true)
        let first = Self.harness(FakeUpstream([Sample.objectKey(1): .json(Sample.object(1))]), disk: disk)
        let fetched = await first.get("/objects/1")

        let second = Self.harness(disk: disk)
        second.time.advance(by: 30)
        let reads = disk.readCount
        let restored = try #require(second.getImmediately("/objects/1"))
        #expect(restored.body == fetched.body)
        #expect(restored.headers["ETag"] == fetched.headers["ETag"])
        #expect(restored.headers["Cache-Status"] == "TheMet; hit; ttl=70; detail=disk")
        #expect(second.service.engine.cache.statistics.diskHits == 1)
        #expect(second.getImmediately("/objects/1")?.headers["Cache-Status"] == "TheMet; hit; ttl=70")
        #expect(disk.readCount == reads + 1)
        #expect(second.upstream.calls.isEmpty)

        // An expired entry is not answered on the loop: its refresh is a task's business.
        let third = Self.harness(FakeUpstream([Sample.objectKey(1): .json(Sample.object(1))]), disk: disk)
        third.time.advance(by: 150)
        #expect(third.getImmediately("/objects/1") == nil)
        #expect(await third.get("/objects/1").headers["Cache-Status"]?.contains("revalidating") == true)
    }

    @Test func aNeedOfSeveralEntriesOnlyOnDiskGoesToATaskWholeAndEachIsReadOnce() async throws {
        let disk = RecordingTier(atOnce: true)
        let upstream = FakeUpstream()
        upstream.answer(SearchSample.v1(), with: SearchSample.ids([1, 2]))
        upstream.answer(.object(id: 1), with: .json(Sample.object(1)))
        upstream.answer(.object(id: 2), with: .json(Sample.object(2)))
        let first = Self.harness(upstream, disk: disk)
        let search = await first.get("/search?q=cypress")

        let second = Self.harness(disk: disk)
        let reads = disk.readCount
        // The ID list is read on the loop; its two objects would be two reads there: a task reads them.
        #expect(second.getImmediately("/search?q=cypress") == nil)
        #expect(disk.readCount == reads + 1)
        let again = await second.get("/search?q=cypress")
        #expect(again.body == search.body)
        #expect(second.service.engine.cache.statistics.diskHits == 3)
        #expect(disk.readCount == reads + 3)
        #expect(second.upstream.calls.isEmpty)
    }

    @Test func aNegativeEntryAndASearchListComeBackFromTheDiskToo() async throws {
        let disk = RecordingTier()
        let upstream = FakeUpstream()
        upstream.answer(.object(id: 9), with: .notFound("Not a valid object"))
        upstream.answer(SearchSample.v1(), with: SearchSample.ids([1]))
        upstream.answer(.object(id: 1), with: .json(Sample.object(1)))
        let first = Self.harness(upstream, disk: disk)
        let missing = await first.get("/objects/9")
        let search = await first.get("/search?q=cypress")
        #expect(missing.status == 404)

        let second = Self.harness(disk: disk)
        let missingAgain = await second.get("/objects/9")
        #expect(missingAgain.status == 404)
        #expect(missingAgain.body == missing.body)
        #expect(missingAgain.cacheOutcome == .diskHit)
        let searchAgain = await second.get("/search?q=cypress")
        #expect(searchAgain.body == search.body)
        #expect(searchAgain.cacheOutcome == .diskHit)
        #expect(second.upstream.calls.isEmpty)
    }

    @Test func anExpiredDiskEntryIsServedWhileOneRefreshReplacesItInBothTiers() async throws {
        let disk = RecordingTier()
        let first = Self.harness(FakeUpstream([Sample.objectKey(1): .json(Sample.object(1))]), disk: disk)
        let fetched = await first.get("/objects/1")

        let upstream = FakeUpstream([Sample.objectKey(1): .json(Sample.object(1, title: "Retitled"))])
        let second = Self.harness(upstream, disk: disk)
        second.time.advance(by: 150)
        let stale = await second.get("/objects/1")
        #expect(stale.body == fetched.body)
        #expect(stale.headers["Cache-Status"] == "TheMet; fwd=stale; ttl=-50; detail=revalidating")
        await upstream.waitForCalls(1)
        await waitUntil { second.service.engine.refreshesRunning == 0 }
        #expect(upstream.calls.count == 1)
        let refreshed = try #require(second.getImmediately("/objects/1"))
        #expect(refreshed.cacheOutcome == .hit)
        #expect(refreshed.text.contains("Retitled"))
        #expect(disk.entry(for: Sample.objectKey(1))?.body == refreshed.body)
    }

    @Test func pastTheWindowTheUpstreamIsAskedAndWhenItFailsTheDiskEntryStandsIn() async throws {
        let disk = RecordingTier()
        let first = Self.harness(FakeUpstream([Sample.objectKey(1): .json(Sample.object(1))]), disk: disk)
        let fetched = await first.get("/objects/1")

        let upstream = FakeUpstream([Sample.objectKey(1): .errorPage(500)])
        let second = Self.harness(upstream, disk: disk)
        second.time.advance(by: 100 + 700)
        let stale = await second.get("/objects/1")
        #expect(upstream.calls.count == 1)
        #expect(stale.status == 200)
        #expect(stale.body == fetched.body)
        #expect(stale.cacheOutcome == .stale)
        // Memory now holds the expired entry: the next request fails over without reading the disk.
        let reads = disk.readCount
        #expect(await second.get("/objects/1").cacheOutcome == .stale)
        #expect(disk.readCount == reads + 1)  // the flight looks at the disk once per upstream attempt
    }

    @Test func aDamagedRowIsAMissThatTheUpstreamAnswers() async throws {
        let disk = RecordingTier()
        let first = Self.harness(FakeUpstream([Sample.objectKey(1): .json(Sample.object(1))]), disk: disk)
        _ = await first.get("/objects/1")
        var record = try #require(disk.entry(for: Sample.objectKey(1))).record
        record[record.count / 2] ^= 0x01
        disk.overwrite(Sample.objectKey(1), with: record)

        let upstream = FakeUpstream([Sample.objectKey(1): .json(Sample.object(1, title: "From the Met"))])
        let second = Self.harness(upstream, disk: disk)
        let answer = await second.get("/objects/1")
        #expect(answer.cacheOutcome == .miss)
        #expect(answer.text.contains("From the Met"))
        #expect(disk.entry(for: Sample.objectKey(1))?.body == answer.body)  // stored anew
    }

    @Test func oneObjectsRecordUnderAnothersKeyIsRefusedEvenWithItsChecksumMadeAnew() throws {
        // What a writer of a shared tier could store: object 100's record, its key rewritten to
        // object 300's and its checksum computed again for the new bytes.
        let forged = CacheEntry(
            key: Sample.objectKey(300), kind: .object, status: 200, body: Array(Sample.object(100).utf8),
            storedAt: 1_000, policy: FreshnessPolicy(),
            details: EntryDetails.read(Array(Sample.object(100).utf8), kind: .object), compress: nil)
        #expect(CacheEntry.restored(record: forged.record, key: Sample.objectKey(300)) == nil)
        // An object's summary under a key of another kind is refused too.
        let listKey = MetResource.objectList(departmentIds: [], metadataDate: nil).cacheKey
        let misfiled = CacheEntry(
            key: listKey, kind: .objectList, status: 200, body: Array(Sample.object(100).utf8), storedAt: 1_000,
            policy: FreshnessPolicy(), details: EntryDetails.read(Array(Sample.object(100).utf8), kind: .object),
            compress: nil)
        #expect(CacheEntry.restored(record: misfiled.record, key: listKey) == nil)
        // The genuine one reads back.
        let genuine = CacheEntry(
            key: Sample.objectKey(100), kind: .object, status: 200, body: Array(Sample.object(100).utf8),
            storedAt: 1_000, policy: FreshnessPolicy(),
            details: EntryDetails.read(Array(Sample.object(100).utf8), kind: .object), compress: nil)
        #expect(CacheEntry.restored(record: genuine.record, key: Sample.objectKey(100)) != nil)
    }

    @Test func aRecordKeepsEveryMemberOfTheEntry() throws {
        var summary = ObjectSummary(objectID: 5)
        summary.title = "Título ✓"
        summary.objectEndDate = -500
        summary.isPublicDomain = false
        let entry = CacheEntry(
            key: "/public/collection/v1/objects/5", kind: .object, status: 200,
            body: Array(Sample.object(5).utf8) + Array(repeating: 0x20, count: 2_000), storedAt: 1_234.5,
            policy: FreshnessPolicy(), details: .object(summary), compress: { Array($0.reversed().prefix(64)) })
        let restored = try #require(CacheEntry.restored(record: entry.record, key: entry.key))
        #expect(restored.body == entry.body)
        #expect(restored.gzipped == entry.gzipped)
        #expect(restored.etag == entry.etag)
        #expect(restored.gzippedETag == entry.gzippedETag)
        #expect(restored.details == entry.details)
        #expect(
            [restored.storedAt, restored.freshUntil, restored.staleUntil, restored.revalidateUntil] == [
                entry.storedAt, entry.freshUntil, entry.staleUntil, entry.revalidateUntil,
            ])
        // A record of version 1 (its own checksum), which rows and Redis values written before
        // version 2 are, reads back the same; one of a version this build does not know is refused.
        let version1 = Self.record(entry.record, as: 1, checksum: Checksum.version1)
        let fromVersion1 = try #require(CacheEntry.restored(record: version1, key: entry.key))
        #expect(fromVersion1.body == entry.body && fromVersion1.gzipped == entry.gzipped)
        #expect(fromVersion1.details == entry.details && fromVersion1.etag == entry.etag)
        #expect(
            CacheEntry.restored(record: Self.record(entry.record, as: 3, checksum: Checksum.of), key: entry.key) == nil)
        // Every single flipped bit anywhere in the record is refused.
        let record = entry.record
        for index in stride(from: 0, to: record.count, by: 7) {
            var damaged = record
            damaged[index] ^= 0x10
            #expect(CacheEntry.restored(record: damaged, key: entry.key) == nil)
        }
    }

    @Test func storedBytesHoldAStringOnlyWhenEveryByteAndTheLengthAgree() {
        let stored = Array("/public/collection/v1/objects/436535".utf8)
        stored.withUnsafeBytes { bytes in
            #expect(bytes.holds("/public/collection/v1/objects/436535".utf8))
            #expect(!bytes.holds("/public/collection/v1/objects/436536".utf8))
            #expect(!bytes.holds("/public/collection/v1/objects/43653".utf8))
            #expect(!bytes.holds("/public/collection/v1/objects/4365350".utf8))
            #expect(!bytes.holds("".utf8))
            let text = "xx/public/collection/v1/objects/436535yy"
            #expect(bytes.holds(text.utf8.dropFirst(2).dropLast(2)))
            #expect(UnsafeRawBufferPointer(rebasing: bytes[..<0]).holds("".utf8))
            #expect(UnsafeRawBufferPointer(rebasing: bytes[..<1]).holds("/".utf8))  // a small string
        }
    }

    @Test func aRecordsStringsAreReadAsTheyWereWrittenAndInvalidUTF8IsRefused() throws {
        // ASCII and not, of lengths on both sides of the eight-byte steps ASCII is checked in.
        let texts = ["", "a", "1234567", "12345678", "123456789", "é", "1234567é", "Société ✓ 葛飾北斎", "🎨🎨🎨 x"]
        for text in texts {
            var summary = ObjectSummary(objectID: 5)
            summary.title = text
            summary.medium = text + text
            let entry = CacheEntry(
                key: "/public/collection/v1/objects/5", kind: .object, status: 200,
                body: Array(Sample.object(5).utf8), storedAt: 1_000, policy: FreshnessPolicy(),
                details: .object(summary))
            let restored = try #require(CacheEntry.restored(record: entry.record, key: entry.key))
            #expect(restored.details == entry.details, "\(text)")
        }
        // A title whose bytes are not UTF-8, under a checksum made for them, is refused: an
        // ASCII run with one byte of 0xFF, and a sequence cut after its lead byte.
        for bad in [[UInt8](repeating: 0x41, count: 11) + [0xFF], [0x41, 0xE9, 0x41], [0xC3]] {
            var summary = ObjectSummary(objectID: 5)
            summary.title = String(repeating: "Q", count: bad.count)
            let entry = CacheEntry(
                key: "/public/collection/v1/objects/5", kind: .object, status: 200,
                body: Array(Sample.object(5).utf8), storedAt: 1_000, policy: FreshnessPolicy(),
                details: .object(summary))
            var covered = Array(entry.record.dropLast(8))
            let at = try #require(Self.offset(of: Array(summary.title!.utf8), in: covered))
            covered.replaceSubrange(at..<at + bad.count, with: bad)
            let damaged = Self.record(covered + [UInt8](repeating: 0, count: 8), as: 2, checksum: Checksum.of)
            #expect(CacheEntry.restored(record: damaged, key: entry.key) == nil, "\(bad)")
        }
    }

    @Test func aRecordsGzipTagMustBeTheOneItsETagMakes() throws {
        let entry = CacheEntry(
            key: "/public/collection/v1/objects/5", kind: .object, status: 200,
            body: Array(Sample.object(5).utf8) + Array(repeating: 0x20, count: 2_000), storedAt: 1_000,
            policy: FreshnessPolicy(), compress: { Array($0.prefix(64)) })
        let tag = try #require(entry.gzippedETag)
        #expect(tag == String(entry.etag.dropLast()) + "-gzip\"")
        #expect(CacheEntry.restored(record: entry.record, key: entry.key)?.gzippedETag == tag)
        // The same length, one byte changed in its ETag part and then in its suffix, with the
        // checksum made anew: refused.
        let covered = Array(entry.record.dropLast(8))
        let at = try #require(Self.offset(of: Array(tag.utf8), in: covered))
        for index in [at + 1, at + tag.utf8.count - 3] {
            var forged = covered
            forged[index] ^= 0x01
            let record = Self.record(forged + [UInt8](repeating: 0, count: 8), as: 2, checksum: Checksum.of)
            #expect(CacheEntry.restored(record: record, key: entry.key) == nil)
        }
    }

    /// Where `needle` first occurs in `haystack`.
    private static func offset(of needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard needle.count <= haystack.count else { return nil }
        return (0...(haystack.count - needle.count)).first { haystack[$0..<$0 + needle.count].elementsEqual(needle) }
    }

    /// `record` with its version byte set to `version` and its checksum made anew by `checksum`.
    private static func record(
        _ record: [UInt8], as version: UInt8, checksum: (UnsafeRawBufferPointer) -> UInt64
    ) -> [UInt8] {
        var covered = Array(record.dropLast(8))
        covered[0] = version
        let sum = covered.withUnsafeBytes { checksum($0) }
        return covered + withUnsafeBytes(of: sum.littleEndian) { Array($0) }
    }
}
