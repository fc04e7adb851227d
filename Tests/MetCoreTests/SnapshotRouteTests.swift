import Foundation
import Testing

@testable import MetCore
@testable import MetEngine

/// `GET /cache/snapshot`: for whoever may purge, and a clear problem when there is nothing to make
/// a snapshot of or it cannot be made (the snapshot itself: MetDisk's tests and the integration
/// tests, over a real SQLite tier).
@Suite("GET /cache/snapshot")
struct SnapshotRouteTests {
    private static func get(_ target: String, on harness: Harness, peer: RequestPeer = .loopback) async -> Response {
        var request = Request(method: "GET", target: target, headers: HTTPFields())
        request.peer = peer
        return await harness.service.response(to: request)
    }

    @Test func withoutAPersistentCacheItIsNoPersistentCacheAndFromElsewhereForbidden() async throws {
        let harness = Harness()
        let none = await Self.get("/cache/snapshot", on: harness)
        #expect(none.status == 404)
        #expect(none.problemCode == "no_persistent_cache")
        #expect(await Self.get("/cache/snapshot", on: harness, peer: .lan).problemCode == "forbidden")
        #expect(await Self.get("/cache/snapshot?fresh=1", on: harness).problemCode == "unknown_parameter")
        var delete = Request(method: "DELETE", target: "/cache/snapshot", headers: HTTPFields())
        delete.peer = .loopback
        let refused = await harness.service.response(to: delete)
        #expect(refused.status == 405)
        #expect(refused.headers["Allow"] == "GET, HEAD, OPTIONS")
    }

    @Test func aTierThatMakesNoSnapshotsIsAnInternalErrorThatSaysSo() async throws {
        let harness = Harness(disk: RecordingTier())
        let failed = await Self.get("/cache/snapshot", on: harness)
        #expect(failed.status == 500)
        #expect(failed.problemCode == "internal_error")
        #expect(
            try failed.jsonObject()["detail"] as? String == "The snapshot could not be made: "
                + "this persistent tier makes no snapshots")
    }
}
