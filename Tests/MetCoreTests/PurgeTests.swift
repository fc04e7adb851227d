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
