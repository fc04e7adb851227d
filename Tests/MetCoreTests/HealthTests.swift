import Foundation
import Testing

@testable import MetCore
@testable import MetEngine

@Suite("/health")
struct HealthTests {
    private func health(_ harness: Harness) throws -> [String: Any] {
        let response = try #require(harness.getImmediately("/health"))
        #expect(response.status == 200)
        #expect(response.headers["Content-Type"] == "application/json; charset=utf-8")
        #expect(response.headers["Cache-Control"] == "no-store")
        return try response.jsonObject()
    }

    @Test func aFreshServerReportsOkAndZeroes() throws {
        let harness = Harness { $0.cache.memorySize = 1_048_576 }
        harness.time.advance(by: 12.9)
        let document = try health(harness)
        #expect(
            Set(document.keys) == [
                "status", "version", "uptimeSeconds", "upstream", "cache", "disk", "redis", "store", "images",
            ])
        #expect(document["disk"] is NSNull)  // the harness has no persistent tier
        #expect(document["redis"] is NSNull)  // nor a shared one
        #expect(document["status"] as? String == "ok")
        #expect(document["version"] as? String == MetService.version)
        #expect(document["uptimeSeconds"] as? Int == 12)

        let upstream = try #require(document["upstream"] as? [String: Any])
        #expect(
            Set(upstream.keys) == [
                "location", "state", "blockedUntil", "lastError", "calls", "blockCooldownSeconds", "pacer",
            ])
        #expect(upstream["location"] as? String == "fake upstream")
        #expect(upstream["state"] as? String == "ok")
        #expect(upstream["blockedUntil"] is NSNull)
        #expect(upstream["lastError"] is NSNull)
        let calls = try #require(upstream["calls"] as? [String: Int])
        #expect(Set(calls.keys) == Set(UpstreamOutcome.allCases.map(\.rawValue)))
        #expect(calls.values.allSatisfy { $0 == 0 })

        let cache = try #require(document["cache"] as? [String: Int])
        #expect(
            cache == [
                "entries": 0, "bytes": 0, "capacityBytes": 1_048_576, "hits": 0, "diskHits": 0, "redisHits": 0,
                "misses": 0,
                "collapsed": 0,
                "revalidating": 0, "staleServed": 0, "evictions": 0, "inFlight": 0,
            ])
        #expect(document["store"] as? [String: Int] == ["records": 0, "replacements": 0, "writes": 0])
    }

    @Test func countersFollowHitsMissesAndUpstreamOutcomes() async throws {
        let upstream = FakeUpstream([
            Sample.objectKey(1): .json(Sample.object(1)), Sample.objectKey(2): .notFound(),
            Sample.objectKey(3): .errorPage(500),
        ])
        let harness = Harness(upstream: upstream)
        _ = await harness.get("/objects/1")
        _ = await harness.get("/objects/1")
        _ = harness.getImmediately("/objects/1")
        _ = await harness.get("/objects/2")
        _ = await harness.get("/objects/3")

        let document = try health(harness)
        #expect(document["status"] as? String == "degraded")
        let upstreamState = try #require(document["upstream"] as? [String: Any])
        #expect(upstreamState["state"] as? String == "unreachable")
        #expect((upstreamState["lastError"] as? String)?.contains("HTTP 500") == true)
        let calls = try #require(upstreamState["calls"] as? [String: Int])
        #expect(calls["ok"] == 1)
        #expect(calls["notFound"] == 1)
        #expect(calls["serverError"] == 1)
        let cache = try #require(document["cache"] as? [String: Int])
        #expect(cache["hits"] == 2)
        #expect(cache["misses"] == 3)  // the failed fetch asked the upstream too
        #expect(cache["entries"] == 2)
        #expect(cache["bytes"] == harness.service.engine.cache.statistics.bytes)
        #expect((cache["bytes"] ?? 0) > 0)

        // A good answer clears the failure state but keeps the last error for diagnosis.
        upstream.answer(.object(id: 3), with: .json(Sample.object(3)))
        _ = await harness.get("/objects/3")
        let recovered = try health(harness)
        #expect(recovered["status"] as? String == "ok")
        let after = try #require(recovered["upstream"] as? [String: Any])
        #expect(after["state"] as? String == "ok")
        #expect(after["lastError"] is String)
    }

    @Test func aBlockShowsAsBlockedUntilTheCooldownEnds() async throws {
        let upstream = FakeUpstream([Sample.objectKey(1): .blockPage])
        let harness = Harness(upstream: upstream) { $0.upstream.blockCooldown = 60 }
        _ = await harness.get("/objects/1")
        let document = try health(harness)
        #expect(document["status"] as? String == "degraded")
        let state = try #require(document["upstream"] as? [String: Any])
        #expect(state["state"] as? String == "blocked")
        let until = try #require(state["blockedUntil"] as? String)
        let expected = Date(timeIntervalSince1970: harness.time.now() + 60).formatted(.iso8601)
        #expect(until == expected)
        #expect((state["calls"] as? [String: Int])?["blocked"] == 1)

        harness.time.advance(by: 60)
        let later = try #require(try health(harness)["upstream"] as? [String: Any])
        // The block is over and nothing has failed since: the upstream is presumed usable again.
        #expect(later["state"] as? String == "ok")
        #expect(later["blockedUntil"] is NSNull)
    }

    @Test func inFlightCountsFetchesInProgress() async throws {
        let upstream = FakeUpstream([Sample.objectKey(1): .json(Sample.object(1))])
        upstream.hold()
        let harness = Harness(upstream: upstream)
        async let response = harness.get("/objects/1")
        await upstream.waitForCalls(1)
        #expect((try health(harness)["cache"] as? [String: Int])?["inFlight"] == 1)
        upstream.release()
        #expect(await response.status == 200)
        #expect((try health(harness)["cache"] as? [String: Int])?["inFlight"] == 0)
    }

    @Test(arguments: ["POST", "DELETE"])
    func healthAnswersOnlyReadMethods(method: String) throws {
        let response = try #require(
            Harness().service.readyResponse(to: Request(method: method, target: "/health")))
        #expect(response.status == 405)
    }
}
