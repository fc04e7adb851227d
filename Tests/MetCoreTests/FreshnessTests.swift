import Foundation
import Testing

@testable import MetCore
@testable import MetEngine

@Suite("Freshness, revalidation and cache headers")
struct FreshnessTests {
    @Test(arguments: [
        (ResourceKind.object, 200, 100.0), (.objectList, 200, 50), (.departments, 200, 200), (.object, 404, 10),
        (.objectList, 404, 10),
    ])
    func lifetimeDependsOnKindAndStatus(kind: ResourceKind, status: Int, lifetime: Double) {
        var policy = FreshnessPolicy()
        policy.object = 100
        policy.objectList = 50
        policy.departments = 200
        policy.notFound = 10
        policy.staleIfError = 1_000
        #expect(policy.lifetime(of: kind, status: status) == lifetime)
        let entry = CacheEntry(key: "k", kind: kind, status: status, body: [], storedAt: 5_000, policy: policy)
        #expect(entry.freshUntil == 5_000 + lifetime)
        #expect(entry.staleUntil == 5_000 + lifetime + 1_000)
        #expect(entry.isFresh(at: 5_000 + lifetime - 0.001))
        #expect(!entry.isFresh(at: 5_000 + lifetime))
        #expect(entry.isUsableWhenStale(at: 5_000 + lifetime + 999.999))
        #expect(!entry.isUsableWhenStale(at: 5_000 + lifetime + 1_000))
    }

    /// One cacheable route per kind: the client target, the upstream resource, a body, and the TTL set below.
    static let routes: [(target: String, resource: MetResource, body: String, ttl: Double)] = [
        ("/objects/1", .object(id: 1), Sample.object(1), 100),
        (
            "/public/collection/v1/objects?departmentIds=1", .objectList(departmentIds: [1], metadataDate: nil),
            Sample.objectList, 50
        ),
        ("/departments", .departments, Sample.departments, 200),
    ]

    private func harness(for resource: MetResource, body: String) -> Harness {
        let upstream = FakeUpstream()
        upstream.answer(resource, with: .json(body))
        return Harness(upstream: upstream) { configuration in
            configuration.cache.freshness.object = 100
            configuration.cache.freshness.objectList = 50
            configuration.cache.freshness.departments = 200
        }
    }

    @Test(arguments: routes)
    func anEntryIsServedWithoutTheUpstreamUntilItsKindsTTLEnds(
        target: String, resource: MetResource, body: String, ttl: Double
    ) async throws {
        let harness = harness(for: resource, body: body)
        #expect(harness.getImmediately(target) == nil)
        let miss = await harness.get(target)
        #expect(miss.status == 200)
        #expect(miss.body == Array(body.utf8))
        #expect(miss.headers["Cache-Status"] == "TheMet; fwd=uri-miss; stored")
        #expect(miss.cacheOutcome == .miss)

        harness.time.advance(by: ttl - 1)
        let hit = try #require(harness.getImmediately(target))
        #expect(hit.status == 200)
        #expect(hit.body == miss.body)
        #expect(hit.headers["Cache-Status"] == "TheMet; hit; ttl=1")
        #expect(hit.cacheOutcome == .hit)
        #expect(await harness.get(target).cacheOutcome == .hit)
        #expect(harness.upstream.callCount(for: resource) == 1)

        harness.time.advance(by: 1)
        #expect(harness.getImmediately(target) == nil)
        let refetched = await harness.get(target)
        #expect(refetched.cacheOutcome == .miss)
        #expect(harness.upstream.callCount(for: resource) == 2)
    }

    @Test func aLoopAnswerNeverCallsTheUpstream() {
        let harness = Harness()
        #expect(harness.getImmediately("/objects/1") == nil)
        #expect(harness.getImmediately("/departments") == nil)
        #expect(harness.getImmediately("/public/collection/v1/objects") == nil)
        #expect(harness.upstream.calls.isEmpty)
        #expect(harness.service.engine.cache.statistics.misses == 0)
    }

    @Test func cacheControlAndAgeMoveWithTheClock() async throws {
        let harness = harness(for: .object(id: 1), body: Sample.object(1))
        let miss = await harness.get("/objects/1")
        #expect(miss.headers["Cache-Control"] == "max-age=100, stale-if-error=604800")
        #expect(miss.headers["Age"] == "0")

        // max-age is the whole lifetime and Age the time since the fetch: a cache downstream
        // reads the freshness left as their difference (RFC 9111 §4.2), as Cache-Status says it.
        harness.time.advance(by: 30.7)
        let hit = try #require(harness.getImmediately("/objects/1"))
        #expect(hit.headers["Cache-Control"] == "max-age=100, stale-if-error=604800")
        #expect(hit.headers["Age"] == "30")
        #expect(hit.headers["Cache-Status"] == "TheMet; hit; ttl=69")

        harness.time.advance(by: 69)
        let last = try #require(harness.getImmediately("/objects/1"))
        #expect(last.headers["Cache-Control"] == "max-age=100, stale-if-error=604800")
        #expect(last.headers["Age"] == "99")
        #expect(last.headers["Cache-Status"] == "TheMet; hit; ttl=0")
    }

    @Test func aStoredAnswerKeepsTheDateOfItsFetchAndAgeCountsFromIt() async throws {
        let harness = harness(for: .object(id: 1), body: Sample.object(1))
        harness.time.advance(by: 0.6)
        let fetched = Int(harness.time.now().rounded(.down))
        let miss = await harness.get("/objects/1")
        #expect(miss.date == fetched)
        for step in [0.5, 30.7, 12.2] {
            harness.time.advance(by: step)
            let now = Int(harness.time.now().rounded(.down))
            for headers: HTTPFields in [[:], ["If-None-Match": "\"other\""]] {
                let hit = try #require(harness.getImmediately("/objects/1", headers: headers))
                #expect(hit.date == fetched)
                #expect(hit.headers["Age"] == String(now - fetched), "Date + Age is now (RFC 9111 §4.2.3)")
            }
        }
        let notFound = Harness(upstream: FakeUpstream([Sample.objectKey(9): .notFound()]))
        #expect(await notFound.get("/objects/9").date == Int(notFound.time.now().rounded(.down)))
        #expect(await notFound.get("/health").date == nil)
    }

    @Test func plainHitsShareOneResponseASecond() async throws {
        let harness = harness(for: .object(id: 1), body: Sample.object(1))
        _ = await harness.get("/objects/1")
        harness.time.advance(by: 5.2)
        let first = try #require(harness.getImmediately("/objects/1"))
        harness.time.advance(by: 0.3)
        let second = try #require(harness.getImmediately("/objects/1"))
        // Shared: the same response, made once, so later layers derive from it once.
        let shared = try #require(first.shared)
        #expect(second.shared === shared)
        #expect(second.headers == first.headers && second.body == first.body)
        // Any change makes it another response.
        var changed = first
        changed.headers.append("X-Test", "1")
        #expect(changed.shared == nil)
        // A later age is a new response; fields= and If-None-Match get none (gzip: ObjectRouteTests).
        harness.time.advance(by: 1)
        let later = try #require(harness.getImmediately("/objects/1"))
        #expect(later.headers["Age"] == "6")
        #expect(later.shared !== shared)
        #expect(harness.getImmediately("/objects/1?fields=title")?.shared == nil)
        #expect(harness.getImmediately("/objects/1", headers: ["If-None-Match": "\"x\""])?.shared == nil)
    }

    @Test func responsesCarryAStrongETagOfTheBody() async throws {
        let harness = harness(for: .object(id: 1), body: Sample.object(1))
        let response = await harness.get("/objects/1")
        let etag = try #require(response.headers["ETag"])
        #expect(etag == ETag.strong(for: Array(Sample.object(1).utf8)))
        #expect(etag.hasPrefix("\"") && etag.hasSuffix("\""))
        #expect(response.headers["Content-Type"] == "application/json; charset=utf-8")
    }

    @Test(arguments: ["{etag}", "W/{etag}", "*", "\"other\", {etag}", " W/\"other\" ,W/{etag} "])
    func aMatchingIfNoneMatchGets304(field: String) async throws {
        let harness = harness(for: .object(id: 1), body: Sample.object(1))
        let first = await harness.get("/objects/1")
        let etag = try #require(first.headers["ETag"])
        let ifNoneMatch: HTTPFields = ["If-None-Match": field.replacingOccurrences(of: "{etag}", with: etag)]

        let immediate = try #require(harness.getImmediately("/objects/1", headers: ifNoneMatch))
        #expect(immediate.status == 304)
        #expect(immediate.body.isEmpty)
        #expect(immediate.headers["ETag"] == etag)
        #expect(immediate.headers["Cache-Control"] == "max-age=100, stale-if-error=604800")
        #expect(immediate.headers["Content-Type"] == nil)
        #expect(await harness.get("/objects/1", headers: ifNoneMatch).status == 304)
        #expect(harness.upstream.calls.count == 1)
    }

    @Test func aMissWithAMatchingIfNoneMatchAlsoGets304() async throws {
        let harness = harness(for: .object(id: 1), body: Sample.object(1))
        let etag = ETag.strong(for: Array(Sample.object(1).utf8))
        let response = await harness.get("/objects/1", headers: ["If-None-Match": etag])
        #expect(response.status == 304)
        #expect(response.headers["Cache-Status"] == "TheMet; fwd=uri-miss; stored")
    }

    @Test(arguments: ["\"other\"", "W/\"other\"", "", "\"\""])
    func aDifferentIfNoneMatchGetsTheBody(field: String) async throws {
        let harness = harness(for: .object(id: 1), body: Sample.object(1))
        _ = await harness.get("/objects/1")
        let response = try #require(harness.getImmediately("/objects/1", headers: ["If-None-Match": field]))
        #expect(response.status == 200)
        #expect(response.body == Array(Sample.object(1).utf8))
    }

    @Test func aZeroTTLMeansEveryRequestAsksTheUpstream() async {
        let upstream = FakeUpstream([Sample.objectKey(1): .json(Sample.object(1))])
        let harness = Harness(upstream: upstream) { $0.cache.freshness.object = 0 }
        _ = await harness.get("/objects/1")
        #expect(harness.getImmediately("/objects/1") == nil)
        _ = await harness.get("/objects/1")
        #expect(upstream.calls.count == 2)
    }

    @Test func aRefreshedEntryReplacesTheOldBodyAndETag() async throws {
        let harness = harness(for: .object(id: 1), body: Sample.object(1, title: "Old"))
        let old = await harness.get("/objects/1")
        harness.upstream.answer(.object(id: 1), with: .json(Sample.object(1, title: "New")))
        harness.time.advance(by: 100)
        let new = await harness.get("/objects/1")
        #expect(new.text.contains("\"New\""))
        #expect(new.headers["ETag"] != old.headers["ETag"])
        let oldTag = try #require(old.headers["ETag"])
        #expect(try #require(harness.getImmediately("/objects/1", headers: ["If-None-Match": oldTag])).status == 200)
        #expect(harness.service.engine.cache.statistics.entries == 1)
    }
}
