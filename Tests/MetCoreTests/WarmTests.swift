import Foundation
import Testing

@testable import MetCore
@testable import MetEngine

/// `themet warm`'s core: the IDs of a source, then each object through the pacer unless fresh.
@Suite("Warming the cache")
struct WarmTests {
    private static func harness(_ disk: RecordingTier = RecordingTier(), mode: SearchAPIMode = .v1) -> Harness {
        let upstream = FakeUpstream()
        for id in 1...30 { upstream.answer(.object(id: id), with: .json(Sample.object(id))) }
        return Harness(upstream: upstream, disk: disk) { $0.upstream.searchAPI = mode }
    }

    @Test func idsAreFetchedUnlessATierHoldsThemFreshAndEachIsReported() async throws {
        let disk = RecordingTier()
        let harness = Self.harness(disk)
        _ = await harness.get("/objects/2")  // fresh in memory
        disk.store(  // fresh on disk only
            CacheEntry(
                key: Sample.objectKey(3), kind: .object, status: 200, body: Array(Sample.object(3).utf8),
                storedAt: harness.time.now(), policy: harness.configuration.cache.freshness))
        let ids = try await harness.warmer.ids(of: .ids([1, 2, 3, 1, 4])).get()
        #expect(ids == [1, 2, 3, 4])
        let reports = Locked<[WarmProgress]>([])
        let progress = await harness.warmer.warm(
            ids, stop: { false }, report: { p in reports.withLock { $0.append(p) } })
        #expect(progress.total == 4)
        #expect((progress.fetched, progress.fresh, progress.failed) == (2, 2, 0))
        #expect(reports.withLock { $0.map(\.done) } == [1, 2, 3, 4])
        #expect(harness.upstream.callCount(for: .object(id: 3)) == 0)
        for id in 1...4 { #expect(harness.getImmediately("/objects/\(id)")?.cacheOutcome == .hit, "object \(id)") }
        #expect(disk.keys.isSuperset(of: [1, 4].map(Sample.objectKey)))
    }

    @Test func aStopEndsItBetweenTwoObjectsAndAFailureIsCounted() async throws {
        let harness = Self.harness()
        harness.upstream.answer(.object(id: 2), with: .errorPage(500))
        let asked = Locked(0)
        let progress = await harness.warmer.warm(
            [1, 2, 3, 4], stop: { asked.withLock { $0 } >= 3 }, report: { _ in asked.withLock { $0 += 1 } })
        #expect((progress.done, progress.fetched, progress.failed) == (3, 2, 1))
        #expect(harness.upstream.callCount(for: .object(id: 4)) == 0)
    }

    @Test func aBlockIsWaitedOutAndTheObjectItRefusedIsAskedAgain() async throws {
        let harness = Self.harness()
        // The firewall blocks the second object's first request; the block lasts a cool-down.
        harness.upstream.answer(.object(id: 2), withEach: [.blockPage, .json(Sample.object(2))])
        let reports = Locked<[WarmProgress]>([])
        let warm = Task {
            await harness.warmer.warm([1, 2, 3], stop: { false }, report: { p in reports.withLock { $0.append(p) } })
        }
        await waitUntil { reports.withLock { $0.last?.blockedUntil != nil } }
        let until = try #require(reports.withLock { $0.last?.blockedUntil })
        #expect(until == harness.time.now() + harness.configuration.upstream.blockCooldown)
        #expect(reports.withLock { $0.last?.done } == 1)
        // It looks every second whether it was stopped, and says how long is left.
        for _ in 0..<Int(harness.configuration.upstream.blockCooldown) {
            let before = reports.withLock { $0.count }
            await waitUntil { harness.time.sleeping >= 1 }
            harness.time.advance(by: Warmer.stopCheckInterval)
            await waitUntil { reports.withLock { $0.count } > before }
        }
        let progress = await warm.value
        #expect((progress.done, progress.fetched, progress.failed) == (3, 3, 0))
        #expect(progress.blockedUntil == nil)
        #expect(harness.upstream.callCount(for: .object(id: 2)) == 2)
        #expect(reports.withLock { $0.filter { $0.blockedUntil != nil }.count } == 60)
    }

    @Test func aStopWhileABlockIsWaitedOutEndsTheWarmUp() async throws {
        let harness = Self.harness()
        harness.upstream.answer(.object(id: 1), with: .blockPage)
        let stopped = Locked(false)
        let warm = Task {
            await harness.warmer.warm([1, 2], stop: { stopped.withLock { $0 } }, report: { _ in })
        }
        await waitUntil { harness.time.sleeping >= 1 }
        stopped.withLock { $0 = true }
        harness.time.advance(by: Warmer.stopCheckInterval)
        let progress = await warm.value
        #expect((progress.done, progress.failed) == (0, 0))
        #expect(harness.upstream.callCount(for: .object(id: 2)) == 0)
    }

    /// Objects 1 and 2 with pictures on the image host (a web-large copy, an original and an
    /// additional original, and one elsewhere that is never asked for); object 2's additional
    /// picture is an error page. The image host's budget is ample (the clock is manual).
    private static func pictureHarness() -> Harness {
        let harness = Harness {
            $0.images.rate = 1_000
            $0.images.burst = 1_000
        }
        for id in 1...2 {
            let host = "https://images.metmuseum.org/CRDImages/ep"
            harness.upstream.answer(
                .object(id: id),
                with: .json(
                    #"{"objectID":\#(id),"primaryImage":"\#(host)/original/DT\#(id).jpg","#
                        + #""primaryImageSmall":"\#(host)/web-large/DT\#(id).jpg","#
                        + #""additionalImages":["\#(host)/original/DT\#(id)b.jpg","https://example.org/x.jpg"]}"#))
            for rendition in ["web-large/DT\(id).jpg", "original/DT\(id).jpg"] {
                harness.upstream.answer(path: "/CRDImages/ep/" + rendition, with: ImageRouteTests.picture())
            }
        }
        harness.upstream.answer(path: "/CRDImages/ep/original/DT1b.jpg", with: ImageRouteTests.picture())
        harness.upstream.answer(path: "/CRDImages/ep/original/DT2b.jpg", with: .errorPage(500))
        return harness
    }

    @Test func withImagesEachObjectsPicturesAreWarmedUnlessFresh() async throws {
        let harness = Self.pictureHarness()
        func warmer(_ pictures: WarmPictures) -> Warmer {
            Warmer(engine: harness.service.engine, searchAPI: .v1, pictures: pictures)
        }
        let small = await warmer(.small).warm([1, 2], stop: { false }, report: { _ in })
        #expect((small.fetched, small.failed) == (2, 0))
        #expect(small.pictures == WarmProgress.Pictures(fetched: 2, fresh: 0, failed: 0))
        #expect(
            harness.upstream.calls.filter { $0.hasPrefix("/CRDImages/") }
                == ["/CRDImages/ep/web-large/DT1.jpg", "/CRDImages/ep/web-large/DT2.jpg"])
        // Served from the picture tiers at once, without the image host.
        #expect(harness.getImmediately("/images/CRDImages/ep/web-large/DT2.jpg")?.status == 200)

        let original = await warmer(.original).warm([1, 2], stop: { false }, report: { _ in })
        #expect((original.fetched, original.fresh) == (0, 2))
        #expect(original.pictures == WarmProgress.Pictures(fetched: 3, fresh: 0, failed: 1))
        let again = await warmer(.small).warm([1, 2], stop: { false }, report: { _ in })
        #expect(again.pictures == WarmProgress.Pictures(fetched: 0, fresh: 2, failed: 0))
        #expect(!harness.upstream.calls.contains { $0.contains("example.org") || $0.hasSuffix("x.jpg") })
    }

    @Test func aBlockOfTheImageHostIsWaitedOutAndThePictureAskedAgain() async throws {
        let harness = Self.pictureHarness()
        harness.upstream.answer(
            path: "/CRDImages/ep/web-large/DT1.jpg", withEach: [.blockPage, ImageRouteTests.picture()])
        let reports = Locked<[WarmProgress]>([])
        let warmer = Warmer(engine: harness.service.engine, searchAPI: .v1, pictures: .small)
        let warm = Task {
            await warmer.warm([1, 2], stop: { false }, report: { p in reports.withLock { $0.append(p) } })
        }
        await waitUntil { reports.withLock { $0.last?.blockedUntil != nil } }
        // The records' breaker is untouched: only pictures wait.
        #expect(harness.service.engine.monitor.blockedUntil(at: harness.time.now()) == nil)
        let until = try #require(reports.withLock { $0.last?.blockedUntil })
        while harness.time.now() < until {
            await waitUntil { harness.time.sleeping >= 1 }
            harness.time.advance(by: Warmer.stopCheckInterval)
        }
        let progress = await warm.value
        #expect(progress.pictures == WarmProgress.Pictures(fetched: 2, fresh: 0, failed: 0))
        #expect(harness.upstream.calls.filter { $0 == "/CRDImages/ep/web-large/DT1.jpg" }.count == 2)
    }

    @Test func aDepartmentAndASearchNameTheirIDs() async throws {
        let harness = Self.harness()
        harness.upstream.answer(
            .objectList(departmentIds: [11], metadataDate: nil), with: .json(#"{"total":2,"objectIDs":[7,5]}"#))
        #expect(try await harness.warmer.ids(of: .department(11)).get() == [7, 5])
        harness.upstream.answer(SearchSample.v1(), with: SearchSample.ids([9, 8, 9]))
        let query = try SearchQuery(RequestTarget(parsing: "/search?q=cypress&limit=1"))
        let listed = await harness.warmer.ids(of: .search(query))
        #expect(try listed.get() == [9, 8], "\(listed) after \(harness.upstream.calls)")
    }

    @Test func onV11EveryPageOfTheWindowIsRead() async throws {
        let harness = Self.harness(mode: .v1_1)
        let query = try SearchQuery(RequestTarget(parsing: "/search?q=cypress&limit=1"))
        let ids = Array(1...700)
        harness.upstream.answer(
            SearchSample.page(0), with: .json(#"{"total":700,"objectIDs":\#(Array(ids.prefix(500)))}"#))
        harness.upstream.answer(
            SearchSample.page(1), with: .json(#"{"total":700,"objectIDs":\#(Array(ids.dropFirst(500)))}"#))
        #expect(try await harness.warmer.ids(of: .search(query)).get() == ids)
    }
}
