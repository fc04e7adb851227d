import Foundation
import Testing

@testable import MetCore
@testable import MetEngine

/// Responses rendered from several entries (search pages, widget timelines) are rendered once,
/// shared while nothing they came from changes, and rendered anew when something does.
@Suite struct SharedRenderTests {
    /// A stand-in for gzip that the tests can recognise and count: the first 16 bytes, reversed.
    final class CountingCompressor: Sendable {
        let calls = Locked(0)

        var compress: @Sendable ([UInt8]) -> [UInt8] {
            { bytes in
                self.calls.withLock { $0 += 1 }
                return Array(bytes.prefix(16).reversed())
            }
        }
    }

    /// A search harness whose records are large enough (over 1 KiB a page) to be compressed.
    private static func harness(compressor: CountingCompressor? = nil) -> (Harness, FakeUpstream) {
        let upstream = FakeUpstream()
        upstream.answer(SearchSample.page(0), with: SearchSample.ids([1, 2]))
        for id in 1...2 {
            let title = String(repeating: "Cypresses ", count: 60) + "\(id)"
            upstream.answer(.object(id: id), with: .json(SearchSample.record(id, title: title)))
        }
        guard let compressor else { return (Harness(upstream: upstream), upstream) }
        return (Harness(upstream: upstream, compressingWith: compressor.compress), upstream)
    }

    @Test func plainSearchHitsShareOneResponseASecond() async throws {
        let (harness, _) = Self.harness()
        _ = await harness.get("/search?q=cypress&store=false")
        let first = try #require(harness.getImmediately("/search?q=cypress&store=false"))
        let second = try #require(harness.getImmediately("/search?q=cypress&store=false"))
        let shared = try #require(first.shared)
        #expect(second.shared === shared)
        harness.time.advance(by: 1)
        let later = try #require(harness.getImmediately("/search?q=cypress&store=false"))
        #expect(later.shared !== shared)
        #expect(later.body == first.body)
        #expect(later.headers["Age"] == "1")
        // Conditional requests are answered for themselves.
        let etag = try #require(first.headers["ETag"])
        #expect(
            harness.getImmediately("/search?q=cypress&store=false", headers: ["If-None-Match": etag])?.status == 304)
    }

    @Test func aChangedRecordMakesANewRender() async throws {
        let (harness, upstream) = Self.harness()
        let before = await harness.get("/search?q=cypress")
        // The records expire before the list does, and one comes back changed.
        upstream.answer(.object(id: 2), with: .json(SearchSample.record(2, title: "Wheat Field")))
        harness.time.advance(by: FreshnessPolicy().object + 1)
        upstream.answer(SearchSample.page(0), with: SearchSample.ids([1, 2]))
        let after = await harness.get("/search?q=cypress")
        #expect(after.text.contains("Wheat Field"))
        #expect(!before.text.contains("Wheat Field"))
        #expect(after.headers["ETag"] != before.headers["ETag"])
        let again = try #require(harness.getImmediately("/search?q=cypress"))
        #expect(again.body == after.body)
    }

    /// A page is kept for its query, but served only while memory holds the very entries it was
    /// made from: an entry stored again with other bytes while fresh makes a new page, whether
    /// the check reads the entries' flags (same second) or looks them up by key (a new second).
    @Test(arguments: [0.0, 1.0])
    func aKeptPageGoesWhenAnEntryItWasMadeFromIsStoredAnew(secondsLater: Double) async throws {
        let (harness, upstream) = Self.harness()
        let first = await harness.get("/search?q=cypress&store=false")
        #expect(harness.getImmediately("/search?q=cypress&store=false")?.body == first.body)
        let record = Array(SearchSample.record(2, title: "Wheat Field").utf8)
        harness.service.engine.cache.store(
            CacheEntry(
                key: Sample.objectKey(2), kind: .object, status: 200, body: record, storedAt: harness.time.now(),
                policy: FreshnessPolicy(), details: EntryDetails.read(record, kind: .object)))
        harness.time.advance(by: secondsLater)
        let after = try #require(harness.getImmediately("/search?q=cypress&store=false"))
        #expect(after.text.contains("Wheat Field"))
        #expect(after.headers["ETag"] != first.headers["ETag"])
        #expect(upstream.calls.count == 3)
    }

    /// A page kept by a request that left the store alone never spares a request that offers it
    /// the store's update.
    @Test func aPageKeptWithoutTheStoreStillReachesItWhenAskedWithIt() async throws {
        let (harness, _) = Self.harness()
        _ = await harness.get("/search?q=cypress&store=false")
        #expect(harness.getImmediately("/search?q=cypress&store=false")?.status == 200)
        #expect(harness.service.store.ids.isEmpty)
        #expect(harness.getImmediately("/search?q=cypress")?.status == 200)
        #expect(harness.service.store.ids == [1, 2])
        harness.service.store.waitForWrites()
    }

    /// A kept page counts as many hits as the entries it was checked against, as the page made
    /// from them does.
    @Test func aKeptPageCountsItsEntriesAsHits() async throws {
        let (harness, _) = Self.harness()
        _ = await harness.get("/search?q=cypress&store=false")
        let rendered = try #require(harness.getImmediately("/search?q=cypress&store=false"))
        let before = harness.service.engine.cache.statistics.hits
        #expect(harness.getImmediately("/search?q=cypress&store=false")?.body == rendered.body)
        #expect(harness.service.engine.cache.statistics.hits == before + 3)  // the list and two records
    }

    @Test func keepingForARequestAgainChargesItOnceAndWhatGoesUnusedIsDropped() {
        let renders = RenderCache<Int>(capacity: 64 * 1_024, compress: nil)
        let entry = CacheEntry(
            key: Sample.objectKey(1), kind: .object, status: 200, body: Array("{}".utf8), storedAt: 0,
            policy: FreshnessPolicy())
        let rendered = renders.rendered("page", gzip: false) { (Array("[]".utf8), "\"page\"") }
        renders.keep(.init(rendered, madeFrom: [entry]), for: 1)
        let bytes = renders.figures.bytes
        renders.keep(.init(rendered, madeFrom: [entry]), for: 1)
        #expect(renders.figures.bytes == bytes)
        #expect(renders.kept(for: 1)?.entries.map(ObjectIdentifier.init) == [ObjectIdentifier(entry)])
        #expect(renders.kept(for: 2) == nil)
        let large = renders.rendered("large", gzip: false) { ([UInt8](repeating: 0x20, count: 15_000), "\"l\"") }
        for request in 2...6 { renders.keep(.init(large, madeFrom: [entry]), for: request) }
        #expect(renders.kept(for: 1) == nil)
        #expect(renders.figures.bytes <= 64 * 1_024)
    }

    /// A render used again and again outlasts any number of renders made once after it; one
    /// unused while a generation's worth of others came goes.
    @Test func aRenderInUseStaysWhileNewOnesComeAndGo() {
        let renders = RenderCache<Int>(capacity: 64 * 1_024, compress: nil)
        let made = Locked<[String: Int]>([:])
        func render(_ key: String) {
            _ = renders.rendered(key, gzip: false) {
                made.withLock { $0[key, default: 0] += 1 }
                return ([UInt8](repeating: 0x20, count: 6_000), "\"\(key)\"")
            }
        }
        render("hot")
        for index in 0..<40 {
            render("once \(index)")
            render("hot")
        }
        #expect(made.withLock { $0["hot"] } == 1)
        #expect(renders.figures.bytes <= 64 * 1_024)
        render("once 0")
        render("once 39")
        #expect(made.withLock { $0["once 0"] } == 2)
        #expect(made.withLock { $0["once 39"] } == 1)
    }

    @Test func aSearchPageIsGzippedOncePerRenderForClientsThatAcceptIt() async throws {
        let compressor = CountingCompressor()
        let (harness, _) = Self.harness(compressor: compressor)
        let plain = await harness.get("/search?q=cypress&store=false")
        let callsAfterFill = compressor.calls.withLock { $0 }
        let gzip: HTTPFields = ["Accept-Encoding": "gzip"]
        let first = try #require(harness.getImmediately("/search?q=cypress&store=false", headers: gzip))
        harness.time.advance(by: 1)
        let second = try #require(harness.getImmediately("/search?q=cypress&store=false", headers: gzip))
        #expect(compressor.calls.withLock { $0 } == callsAfterFill)  // compressed when first rendered, not per request
        #expect(first.headers["Content-Encoding"] == "gzip")
        #expect(first.headers["Vary"] == "Accept-Encoding")
        #expect(first.body == Array(plain.body.prefix(16).reversed()))
        #expect(second.body == first.body)
        let etag = try #require(first.headers["ETag"])
        #expect(etag.hasSuffix("-gzip\"") && etag != plain.headers["ETag"])
        #expect(plain.headers["Content-Encoding"] == nil)
        #expect(plain.headers["Vary"] == "Accept-Encoding")
        let revalidated = try #require(
            harness.getImmediately(
                "/search?q=cypress&store=false", headers: ["Accept-Encoding": "gzip", "If-None-Match": etag]))
        #expect(revalidated.status == 304)
    }

    @Test func theStoresTimelineIsRenderedAnewWhenTheStoreChanges() async throws {
        let (harness, upstream) = Self.harness()
        let target = "/widget/timeline?start=2026-12-01T00:00:00Z"
        let empty = try #require(harness.getImmediately(target))
        #expect(harness.getImmediately(target)?.shared === empty.shared)
        _ = await harness.get("/search?q=cypress")  // replaces the store
        harness.service.store.waitForWrites()
        let filled = try #require(harness.getImmediately(target))
        #expect(filled.body != empty.body)
        #expect(filled.headers["ETag"] != empty.headers["ETag"])
        #expect(upstream.calls.count == 3)
    }
}

/// The same request answered on the loop (a hit) and after a miss (in a task) runs the same
/// route code: the bytes are the same, apart from what says which way it went (`Cache-Status`).
@Suite struct OnePathTests {
    private static func harness() -> Harness {
        let upstream = FakeUpstream()
        upstream.answer(SearchSample.page(0), with: SearchSample.ids([1, 2]))
        SearchSample.answerObjects(1...2, on: upstream)
        return Harness(upstream: upstream)
    }

    @Test(arguments: [
        "/objects/1", "/objects/2?fields=title,objectID", "/open/1", "/open/2?format=json",
        "/search?q=cypress&store=false", "/widget/timeline?q=cypress&store=false&start=2026-12-01T00:00:00Z",
        "/public/collection/v1/objects/1",
    ])
    func aRouteGivesTheSameBytesOnTheLoopAndAfterAMiss(target: String) async throws {
        let harness = Self.harness()
        #expect(harness.getImmediately(target) == nil)
        let afterMiss = await harness.get(target)
        let onLoop = try #require(harness.getImmediately(target))
        #expect(onLoop.status == afterMiss.status)
        #expect(onLoop.body == afterMiss.body)
        func fields(_ response: Response) -> [String] {
            response.headers.filter { $0.name != "Cache-Status" }.map { "\($0.name): \($0.value)" }
        }
        #expect(fields(onLoop) == fields(afterMiss))
        #expect(afterMiss.headers["Cache-Status"].map { $0.contains("fwd=uri-miss") } != false)
    }
}
