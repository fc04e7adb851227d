import Foundation
import Testing

@testable import MetCore
@testable import MetEngine

/// After freshness, within `--stale-while-revalidate`, an entry is answered at once on the loop
/// while one background request refreshes it; past the window, the request waits as on a miss.
@Suite("Stale-while-revalidate")
struct StaleWhileRevalidateTests {
    /// Objects fresh for 100 s, then served while revalidating for 600 s more; stale-if-error
    /// 1,000 s after freshness.
    private static func harness() -> Harness {
        let upstream = FakeUpstream([Sample.objectKey(1): .json(Sample.object(1))])
        return Harness(upstream: upstream) { configuration in
            configuration.cache.freshness.object = 100
            configuration.cache.freshness.staleWhileRevalidate = 600
            configuration.cache.freshness.staleIfError = 1_000
        }
    }

    @Test func anExpiredEntryIsServedAtOnceWhileOneRequestRefreshesIt() async throws {
        let harness = Self.harness()
        let first = await harness.get("/objects/1")
        harness.time.advance(by: 150)
        harness.upstream.answer(.object(id: 1), with: .json(Sample.object(1, title: "Cypresses (retitled)")))
        harness.upstream.hold()

        // Answered on the loop, from the expired entry, with the refresh under way.
        let stale = try #require(harness.getImmediately("/objects/1"))
        #expect(stale.status == 200)
        #expect(stale.body == first.body)
        #expect(stale.headers["Cache-Status"] == "TheMet; fwd=stale; ttl=-50; detail=revalidating")
        // A cache downstream reads it as 50 s stale (Age 150 past a 100 s lifetime), within both windows.
        #expect(stale.headers["Cache-Control"] == "max-age=100, stale-while-revalidate=600, stale-if-error=1000")
        #expect(stale.headers["Age"] == "150")
        await harness.upstream.waitForCalls(2)
        for _ in 0..<20 {
            #expect(harness.getImmediately("/objects/1")?.cacheOutcome == .revalidating)
        }
        #expect(harness.upstream.calls.count == 2)  // one refresh for all of them
        #expect(harness.service.engine.cache.statistics.revalidating == 21)

        harness.upstream.release()
        await waitUntil { harness.service.engine.refreshesRunning == 0 }
        let refreshed = try #require(harness.getImmediately("/objects/1"))
        #expect(refreshed.cacheOutcome == .hit)
        #expect(refreshed.text.contains("Cypresses (retitled)"))
        #expect(
            refreshed.headers["Cache-Control"] == "max-age=100, stale-while-revalidate=600, stale-if-error=1000"
        )
    }

    @Test func aRefreshThatFailsKeepsTheStaleEntry() async throws {
        let harness = Self.harness()
        let first = await harness.get("/objects/1")
        harness.time.advance(by: 150)
        harness.upstream.answer(.object(id: 1), with: .errorPage(500))

        #expect(harness.getImmediately("/objects/1")?.cacheOutcome == .revalidating)
        await harness.upstream.waitForCalls(2)
        await waitUntil { harness.service.engine.refreshesRunning == 0 }
        let after = try #require(harness.getImmediately("/objects/1"))
        #expect(after.cacheOutcome == .revalidating)
        #expect(after.body == first.body)
        #expect(harness.service.engine.cache.statistics.entries == 1)
        #expect(harness.upstream.calls.count == 2)  // no new refresh within a second of the failure
        harness.time.advance(by: CachedFetcher<MetResource>.refreshRetryInterval)
        #expect(harness.getImmediately("/objects/1")?.cacheOutcome == .revalidating)
        await harness.upstream.waitForCalls(3)
    }

    @Test func pastTheWindowARequestWaitsForTheUpstream() async throws {
        let harness = Self.harness()
        _ = await harness.get("/objects/1")
        harness.time.advance(by: 100 + 600)
        #expect(harness.getImmediately("/objects/1") == nil)
        let fetched = await harness.get("/objects/1")
        #expect(fetched.cacheOutcome == .miss)
        #expect(harness.upstream.calls.count == 2)
        #expect(harness.service.engine.refreshesRunning == 0)
    }

    @Test func aSearchPageWithAnExpiredRecordIsServedAtOnceAndTheRecordRefreshed() async throws {
        let upstream = FakeUpstream()
        upstream.answer(SearchSample.page(0), with: SearchSample.ids([1, 2]))
        SearchSample.answerObjects(1...2, on: upstream)
        let harness = Harness(upstream: upstream) { configuration in
            configuration.cache.freshness.object = 100
            configuration.cache.freshness.search = 10_000
            configuration.cache.freshness.staleWhileRevalidate = 600
        }
        let first = await harness.get("/search?q=cypress&store=false")
        harness.time.advance(by: 150)
        upstream.answer(.object(id: 2), with: .json(SearchSample.record(2, title: "Wheat Field")))

        let stale = try #require(harness.getImmediately("/search?q=cypress&store=false"))
        #expect(stale.body == first.body)
        #expect(stale.headers["Cache-Status"]?.hasPrefix("TheMet; fwd=stale; ttl=") == true)
        #expect(stale.headers["Cache-Status"]?.hasSuffix("detail=revalidating") == true)
        await waitUntil { upstream.calls.count == 5 && harness.service.engine.refreshesRunning == 0 }
        let refreshed = try #require(harness.getImmediately("/search?q=cypress&store=false"))
        #expect(refreshed.cacheOutcome == .hit)
        #expect(refreshed.text.contains("Wheat Field"))
    }

    @Test func zeroTurnsItOff() async throws {
        let upstream = FakeUpstream([Sample.objectKey(1): .json(Sample.object(1))])
        let harness = Harness(upstream: upstream) { $0.cache.freshness.object = 100 }  // the harness sets 0
        let first = await harness.get("/objects/1")
        #expect(first.headers["Cache-Control"]?.contains("stale-while-revalidate") == false)
        harness.time.advance(by: 101)
        #expect(harness.getImmediately("/objects/1") == nil)
    }
}
