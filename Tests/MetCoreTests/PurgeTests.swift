import Foundation
import Testing

@testable import MetCore
@testable import MetEngine

/// `DELETE /cache/objects/{id}` and `DELETE /cache/search?…` remove entries from memory and the
/// persistent tier, for loopback clients or the admin token's holders only.
@Suite("Purge")
struct PurgeTests {
    static let token = "a-token-of-twenty-characters"

    private static func harness(_ disk: RecordingTier = RecordingTier(), token: String? = nil) -> Harness {
        let upstream = FakeUpstream([Sample.objectKey(1): .json(Sample.object(1))])
        upstream.answer(SearchSample.v1(), with: SearchSample.ids([1]))
        return Harness(upstream: upstream, disk: disk) { configuration in
            configuration.upstream.searchAPI = .v1
            configuration.access.adminToken = token
        }
    }

    private static func delete(
        _ target: String, on harness: Harness, peer: RequestPeer = .loopback, headers: HTTPFields = HTTPFields()
    ) async -> Response {
        var request = Request(method: "DELETE", target: target, headers: headers)
        request.peer = peer
        return await harness.service.response(to: request)
    }

    @Test func aLoopbackClientPurgesAnObjectFromBothTiersAndTheNextRequestFetchesItAgain() async throws {
        let disk = RecordingTier()
        let harness = Self.harness(disk)
        _ = await harness.get("/objects/1")
        #expect(disk.keys == [Sample.objectKey(1)])

        let purged = await Self.delete("/cache/objects/1", on: harness)
        #expect(purged.status == 200)
        #expect(purged.headers["Cache-Control"] == "no-store")
        let json = try purged.jsonObject()
        #expect(json["keys"] as? [String] == [Sample.objectKey(1)])
        #expect(json["removedFromMemory"] as? Int == 1)
        #expect(json["removedFromDisk"] as? Int == 1)
        #expect(disk.keys.isEmpty)

        #expect(harness.getImmediately("/objects/1") == nil)
        #expect(await harness.get("/objects/1").cacheOutcome == .miss)
        #expect(harness.upstream.calls.count == 2)
        // The entry fetched again is purged again; a key never cached removes nothing, and is no error.
        let again = try await Self.delete("/cache/objects/1", on: harness).jsonObject()
        #expect(again["removedFromMemory"] as? Int == 1)
        #expect(try await Self.delete("/cache/objects/2", on: harness).jsonObject()["removedFromMemory"] as? Int == 0)
    }

    @Test func aSearchPurgeRemovesItsIDListsAndLeavesTheObjects() async throws {
        let harness = Self.harness()
        let first = await harness.get("/search?q=cypress")
        #expect(first.status == 200)
        let purged = try await Self.delete("/cache/search?q=cypress&limit=5", on: harness).jsonObject()
        let keys = try #require(purged["keys"] as? [String])
        #expect(keys.count == 1 + SearchAPI.window / SearchAPI.pageLimit)  // v1's list, every v1.1 page
        #expect(keys.contains(SearchSample.v1().cacheKey))
        #expect(purged["removedFromMemory"] as? Int == 1)
        let again = await harness.get("/search?q=cypress")
        #expect(again.body == first.body)
        #expect(harness.upstream.callCount(for: SearchSample.v1()) == 2)
        #expect(harness.upstream.callCount(for: .object(id: 1)) == 1)
    }

    @Test func aSoftPurgeKeepsTheCopiesExpiredInBothTiersAndTheNextRequestRefreshesThem() async throws {
        let disk = RecordingTier()
        let harness = Self.harness(disk)
        let first = await harness.get("/objects/1")
        harness.upstream.answer(.object(id: 1), with: .json(Sample.object(1, title: "Retitled")))

        let purged = await Self.delete("/cache/objects/1?soft=true", on: harness)
        #expect(purged.status == 200)
        #expect(purged.headers["Cache-Control"] == "no-store")
        let json = try purged.jsonObject()
        #expect(json["keys"] as? [String] == [Sample.objectKey(1)])
        #expect(json["soft"] as? Bool == true)
        #expect(json["expiredInMemory"] as? Int == 1)
        #expect(json["expiredOnDisk"] as? Int == 1)
        #expect(json["expiredInRedis"] is NSNull)
        #expect(json["removedFromMemory"] == nil)
        let row = try #require(disk.entry(for: Sample.objectKey(1)))
        #expect(row.body == first.body)
        #expect(!row.isFresh(at: harness.time.now()))
        #expect(row.isUsableWhenStale(at: harness.time.now() + 3_600))

        let refreshed = await harness.get("/objects/1")
        #expect(refreshed.text.contains("Retitled"))
        #expect(harness.upstream.calls.count == 2)
        #expect(disk.entry(for: Sample.objectKey(1))?.body == refreshed.body)
        // A key never cached expires nothing, and is no error.
        let none = try await Self.delete("/cache/objects/2?soft=true", on: harness).jsonObject()
        #expect(none["expiredInMemory"] as? Int == 0)
        #expect(none["expiredOnDisk"] as? Int == 0)
        #expect(await Self.delete("/cache/objects/1?soft=false", on: harness).status == 200)
        #expect(disk.keys.isEmpty)  // soft=false is the ordinary purge
    }

    @Test func duringABlockASoftPurgedRecordStillAnswersAndAfterItIsRefreshed() async throws {
        let harness = Self.harness()
        let first = await harness.get("/objects/1")
        harness.upstream.answer(.object(id: 2), with: .blockPage)
        #expect(await harness.get("/objects/2").problemCode == "upstream_blocked")

        #expect(
            try await Self.delete("/cache/objects/1?soft=true", on: harness).jsonObject()["expiredInMemory"] as? Int
                == 1)
        let during = await harness.get("/objects/1")
        #expect(during.status == 200)
        #expect(during.body == first.body)
        #expect(during.cacheOutcome == .stale)
        #expect(harness.upstream.calls == [Sample.objectKey(1), Sample.objectKey(2)])  // nothing sent during the block

        harness.time.advance(by: 60)  // the breaker closes
        harness.upstream.answer(.object(id: 1), with: .json(Sample.object(1, title: "Retitled")))
        let after = await harness.get("/objects/1")
        #expect(after.text.contains("Retitled"))
        #expect(after.cacheOutcome == .miss)
    }

    @Test func aSoftSearchPurgeExpiresItsIDListsAndSoftIsCheckedLikeAnyParameter() async throws {
        let harness = Self.harness()
        _ = await harness.get("/search?q=cypress")
        let purged = try await Self.delete("/cache/search?q=cypress&soft=true", on: harness).jsonObject()
        #expect(purged["soft"] as? Bool == true)
        #expect(purged["expiredInMemory"] as? Int == 1)
        #expect(harness.getImmediately("/search?q=cypress") == nil)  // the list is no longer fresh
        _ = await harness.get("/search?q=cypress")
        #expect(harness.upstream.callCount(for: SearchSample.v1()) == 2)
        #expect(harness.upstream.callCount(for: .object(id: 1)) == 1)

        for target in [
            "/cache/objects/1?soft=maybe", "/cache/objects/1?soft=true&soft=true", "/cache/search?q=a&soft=1",
        ] {
            let refused = await Self.delete(target, on: harness)
            #expect(refused.problemCode == "invalid_parameter", "\(target)")
            #expect(try refused.jsonObject()["parameter"] as? String == "soft")
        }
        #expect(
            await Self.delete("/cache/search?q=a&soft=true&soft=false", on: harness).problemCode == "invalid_parameter")
    }

    @Test func aClientElsewhereNeedsTheAdminToken() async throws {
        let open = Self.harness()
        _ = await open.get("/objects/1")
        let refused = await Self.delete("/cache/objects/1", on: open, peer: .lan)
        #expect(refused.status == 403)
        #expect(refused.problemCode == "forbidden")
        // Refused before anything else is read: a bad ID from elsewhere is a 403 too.
        #expect(await Self.delete("/cache/objects/x", on: open, peer: .lan).status == 403)
        // Without --admin-token no bearer token is good.
        let guessed = await Self.delete(
            "/cache/objects/1", on: open, peer: .lan, headers: ["Authorization": "Bearer \(Self.token)"])
        #expect(guessed.status == 403)
        #expect(open.getImmediately("/objects/1")?.cacheOutcome == .hit)

        let guarded = Self.harness(token: Self.token)
        _ = await guarded.get("/objects/1")
        for wrong in ["Bearer \(Self.token)x", "Bearer", "bearer \(Self.token)", "Basic \(Self.token)", Self.token] {
            let answer = await Self.delete(
                "/cache/objects/1", on: guarded, peer: .lan, headers: ["Authorization": wrong])
            #expect(answer.status == 403, "\(wrong)")
        }
        let allowed = await Self.delete(
            "/cache/objects/1", on: guarded, peer: .lan, headers: ["Authorization": "Bearer \(Self.token)"])
        #expect(allowed.status == 200)
        #expect(guarded.getImmediately("/objects/1") == nil)
    }

    @Test func withAnAdminTokenThisMachineNeedsItToo() async throws {
        let guarded = Self.harness(token: Self.token)
        _ = await guarded.get("/objects/1")
        let refused = await Self.delete("/cache/objects/1", on: guarded)
        #expect(refused.status == 403)
        #expect(refused.problemCode == "forbidden")
        #expect(guarded.getImmediately("/objects/1")?.cacheOutcome == .hit)
        let allowed = await Self.delete(
            "/cache/objects/1", on: guarded, headers: ["Authorization": "Bearer \(Self.token)"])
        #expect(allowed.status == 200)
    }

    /// What a proxy on this host adds: any one of them makes a loopback request not local.
    @Test(arguments: [
        ("X-Forwarded-For", "203.0.113.9"), ("Forwarded", "for=203.0.113.9"), ("X-Real-IP", "203.0.113.9"),
        ("Via", "1.1 proxy"), ("X-Forwarded-Proto", "https"), ("X-Forwarded-Host", "met.example"),
    ])
    func aPurgeThroughAProxyOnThisMachineIsRefused(field: String, value: String) async throws {
        let harness = Self.harness()
        _ = await harness.get("/objects/1")
        let refused = await Self.delete("/cache/objects/1", on: harness, headers: [field: value])
        #expect(refused.status == 403)
        #expect(harness.getImmediately("/objects/1")?.cacheOutcome == .hit)
    }

    @Test func aTrustedProxyOnThisMachineNeverPurgesWithoutTheToken() async throws {
        let upstream = FakeUpstream([Sample.objectKey(1): .json(Sample.object(1))])
        let harness = Harness(upstream: upstream) { configuration in
            configuration.access.trustedProxies = try! TrustedProxies.parse("127.0.0.1", field: .xForwardedFor).get()
        }
        _ = await harness.get("/objects/1")
        // Even with no forwarding field at all (a proxy that adds none).
        #expect(await Self.delete("/cache/objects/1", on: harness).status == 403)
        let forwarded = await Self.delete(
            "/cache/objects/1", on: harness, headers: ["X-Forwarded-For": "127.0.0.1"])
        #expect(forwarded.status == 403)
        #expect(harness.getImmediately("/objects/1")?.cacheOutcome == .hit)
    }

    @Test func thePurgeRoutesAnswerDeleteOnlyAndTheOthersNeverDelete() async throws {
        let harness = Self.harness()
        let get = await harness.get("/cache/objects/1")
        #expect(get.status == 405)
        #expect(get.headers["Allow"] == "DELETE, OPTIONS")
        let delete = await Self.delete("/objects/1", on: harness)
        #expect(delete.status == 405)
        #expect(delete.headers["Allow"] == "GET, HEAD, OPTIONS")
        let preflight = await harness.service.response(to: Request(method: "OPTIONS", target: "/cache/search?q=a"))
        #expect(preflight.status == 204)
        #expect(preflight.headers["Access-Control-Allow-Methods"] == "DELETE, OPTIONS")
        #expect(await Self.delete("/cache/objects/abc", on: harness).problemCode == "invalid_object_id")
        #expect(await Self.delete("/cache/objects/1?fields=title", on: harness).problemCode == "unknown_parameter")
        #expect(await Self.delete("/cache/search?sort=nope", on: harness).status == 400)
        #expect(await Self.delete("/cache/departments", on: harness).status == 404)
    }
}
