import Foundation
import TestKit
import Testing

@testable import MetCore
@testable import MetEngine

/// `metadataDate` sync: the cached records among those the Met lists as changed are marked
/// expired and refetched, most recently used first; the others stay hits.
@Suite("metadataDate sync")
struct SyncTests {
    /// 100 objects the fake knows; the harness keeps a persistent tier and its own data directory.
    private static func harness(_ disk: RecordingTier, directory: TemporaryDirectory) -> Harness {
        let upstream = FakeUpstream()
        for id in 1...100 { upstream.answer(.object(id: id), with: .json(Sample.object(id))) }
        return Harness(upstream: upstream, disk: disk) { configuration in
            configuration.cache.dataDirectory = directory.path
        }
    }

    /// The list the sync asks for at `now`, with no earlier sync: one object lifetime back.
    private static func changes(since seconds: Double) -> MetResource {
        .objectList(departmentIds: [], metadataDate: Synchronizer.day(of: seconds))
    }

    @Test func exactlyTheChangedCachedRecordsAreRefetchedMostRecentlyUsedFirst() async throws {
        let directory = TemporaryDirectory()
        let disk = RecordingTier()
        let harness = Self.harness(disk, directory: directory)
        for id in 1...100 { _ = await harness.get("/objects/\(id)") }
        // Used again, in this order (all from the older half of the LRU, which moves them to its front).
        for id in [10, 5, 30] { #expect(harness.getImmediately("/objects/\(id)")?.cacheOutcome == .hit) }
        harness.time.advance(by: 3_600)
        let lookBack = harness.configuration.cache.freshness.object
        harness.upstream.answer(
            Self.changes(since: harness.time.now() - lookBack), with: .json(#"{"total":4,"objectIDs":[5,10,30,4242]}"#))
        for id in [5, 10, 30] {
            harness.upstream.answer(.object(id: id), with: .json(Sample.object(id, title: "Changed \(id)")))
        }
        let calls = harness.upstream.calls.count

        let report = try await harness.synchronizer.run().get()
        #expect(
            report
                == SyncReport(
                    since: Synchronizer.day(of: harness.time.now() - lookBack), listed: 4, cached: 3, refreshed: 3,
                    failed: 0))
        let made = Array(harness.upstream.calls.dropFirst(calls))
        #expect(
            made == [Self.changes(since: harness.time.now() - lookBack).cacheKey] + [30, 5, 10].map(Sample.objectKey))
        for id in 1...100 {
            let answer = try #require(harness.getImmediately("/objects/\(id)"), "object \(id) is not a hit")
            #expect(answer.cacheOutcome == .hit)
            #expect(answer.text.contains("Changed \(id)") == [5, 10, 30].contains(id), "object \(id)")
        }
        #expect(disk.entry(for: Sample.objectKey(5))?.body == harness.getImmediately("/objects/5")?.body)
        #expect(FileManager.default.fileExists(atPath: directory.path + "/sync.json"))
    }

    @Test func theNextSyncAsksSinceTheLastOneAndAFailedListMarksNothing() async throws {
        let directory = TemporaryDirectory()
        let harness = Self.harness(RecordingTier(), directory: directory)
        _ = await harness.get("/objects/1")
        let lookBack = harness.configuration.cache.freshness.object
        harness.upstream.answer(
            Self.changes(since: harness.time.now() - lookBack), with: .json(#"{"total":0,"objectIDs":null}"#))
        let first = harness.time.now()
        #expect(try await harness.synchronizer.run().get().listed == 0)
        #expect(await harness.synchronizer.lastSync() == first)

        harness.time.advance(by: 2 * 86_400)
        // The list for the day of the last sync fails: nothing changes, and it is not recorded.
        harness.upstream.answer(Self.changes(since: first), with: .errorPage(500))
        harness.upstream.answer(.object(id: 1), with: .json(Sample.object(1, title: "Changed")))
        let failed = await harness.synchronizer.run()
        #expect(throws: UpstreamError.self) { try failed.get() }
        #expect(await harness.synchronizer.lastSync() == first)
        #expect(harness.getImmediately("/objects/1")?.text.contains("Changed") == false)
    }
}
