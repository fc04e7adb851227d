import Foundation
import Testing

@testable import MetCore
@testable import MetEngine

@Suite("GET /objects?ids=: several records in one request")
struct ObjectBatchTests {
    /// 100 IDs, every tenth a Met 404 (either message), the rest records.
    private static let ids = Array(5_001...5_100)
    private static let notFound = Set(stride(from: 5_010, through: 5_100, by: 10))

    private static func upstream() -> FakeUpstream {
        let upstream = FakeUpstream()
        for id in ids {
            if notFound.contains(id) {
                upstream.answer(
                    .object(id: id), with: .notFound(id % 20 == 0 ? "Not a valid object" : "ObjectID not found"))
            } else {
                upstream.answer(.object(id: id), with: .json(SearchSample.record(id, title: "Work \(id)")))
            }
        }
        return upstream
    }

    private static func target(_ ids: [Int], _ rest: String = "") -> String {
        "/objects?ids=" + ids.map(String.init).joined(separator: ",") + rest
    }

    private func objectIDs(_ response: Response) throws -> [Int] {
        try #require(try response.jsonObject()["objects"] as? [[String: Any]]).compactMap { $0["objectID"] as? Int }
    }

    @Test func aHundredIDsComeBackInTheOrderAskedWithTheMissingOnesNamed() async throws {
        let harness = Harness(upstream: Self.upstream())
        let asked = Self.ids.shuffled()
        let response = await harness.get(Self.target(asked))
        #expect(response.status == 200)
        #expect(response.headers["Content-Type"] == Response.jsonContentType)
        let body = try response.jsonObject()
        #expect(try objectIDs(response) == asked.filter { !Self.notFound.contains($0) })
        #expect(body["missing"] as? [Int] == asked.filter { Self.notFound.contains($0) })
        #expect(body["pending"] as? [Int] == [])
        // Each ID once upstream, and once only: the same batch again is answered from memory.
        #expect(harness.upstream.calls.count == 100)
        #expect(Set(harness.upstream.calls).count == 100)
        let again = try #require(harness.getImmediately(Self.target(asked)))
        #expect(again.body == response.body)
        #expect(again.headers["Cache-Status"]?.hasPrefix("TheMet; hit") == true)
        #expect(harness.upstream.calls.count == 100)
        // Fresh for as long as its shortest-lived entry: the 404s' hour.
        #expect(again.headers["Cache-Control"] == "max-age=3600")
        let etag = try #require(again.headers["ETag"])
        #expect(harness.getImmediately(Self.target(asked), headers: ["If-None-Match": etag])?.status == 304)
    }

    @Test func overlappingBatchesAtOnceFetchEachIDOnce() async throws {
        let upstream = Self.upstream()
        // Room for every call at once, so that all of them are held together.
        let harness = Harness(upstream: upstream) { $0.upstream.concurrency = 200 }
        upstream.hold()
        let first = Array(Self.ids[0..<60])
        let second = Array(Self.ids[30..<100]).reversed().map { $0 }
        async let a = harness.get(Self.target(first))
        async let b = harness.get(Self.target(second))
        async let c = harness.get("/objects/\(Self.ids[40])")
        await upstream.waitForCalls(100)
        upstream.release()
        let (one, two, three) = await (a, b, c)
        #expect([one.status, two.status, three.status] == [Int](repeating: 200, count: 3))
        #expect(try objectIDs(one) == first.filter { !Self.notFound.contains($0) })
        #expect(try objectIDs(two) == second.filter { !Self.notFound.contains($0) })
        #expect(harness.upstream.calls.count == 100)
        #expect(Set(harness.upstream.calls).count == 100)
    }

    @Test func whatHasNotArrivedByTheWaitIsPendingAndNotStored() async throws {
        let upstream = Self.upstream()
        let harness = Harness(upstream: upstream)
        harness.service.engine.cache.store(
            CacheEntry(
                key: Sample.objectKey(5_001), kind: .object, status: 200,
                body: Array(SearchSample.record(5_001).utf8), storedAt: harness.time.now(), policy: FreshnessPolicy(),
                details: EntryDetails.read(Array(SearchSample.record(5_001).utf8), kind: .object)))
        upstream.hold()
        let partial = await harness.get(Self.target([5_001, 5_002, 5_003], "&wait=0"))
        #expect(partial.status == 200)
        #expect(partial.headers["Cache-Control"] == "no-store")
        #expect(try objectIDs(partial) == [5_001])
        #expect(try partial.jsonObject()["pending"] as? [Int] == [5_002, 5_003])
        await upstream.waitForCalls(2)
        upstream.release()
        await waitUntil { harness.service.engine.backgroundFillsRunning == 0 }
        let complete = try #require(harness.getImmediately(Self.target([5_001, 5_002, 5_003], "&wait=0")))
        #expect(try objectIDs(complete) == [5_001, 5_002, 5_003])
        #expect(complete.headers["Cache-Control"]?.hasPrefix("max-age=") == true)
        #expect(upstream.calls.count == 2)
    }

    @Test func fieldsKeepOnlyTheMembersNamed() async throws {
        let harness = Harness(upstream: Self.upstream())
        let response = await harness.get(Self.target([5_002, 5_001], "&fields=objectID,title"))
        let objects = try #require(try response.jsonObject()["objects"] as? [[String: Any]])
        #expect(objects.map { Set($0.keys) } == [["objectID", "title"], ["objectID", "title"]])
        #expect(objects.compactMap { $0["title"] as? String } == ["Work 5002", "Work 5001"])
    }

    @Test func aRepeatedIDKeepsItsFirstPlace() async throws {
        let harness = Harness(upstream: Self.upstream())
        let response = await harness.get(Self.target([5_003, 5_001, 5_003, 5_001]))
        #expect(try objectIDs(response) == [5_003, 5_001])
        #expect(harness.upstream.calls.count == 2)
    }

    @Test func whenTheMetFailsForEveryIDTheFailureIsTheAnswer() async throws {
        let upstream = FakeUpstream()
        upstream.answer(.object(id: 7), with: .blockPage)
        upstream.answer(.object(id: 8), with: .blockPage)
        let harness = Harness(upstream: upstream)
        let response = await harness.get("/objects?ids=7,8")
        #expect(response.status == 503)
        #expect(response.problemCode == "upstream_blocked")
        #expect(response.headers["Retry-After"] != nil)
    }

    @Test func oneFailureAmongRecordsIsPending() async throws {
        let upstream = Self.upstream()
        upstream.answer(.object(id: 9), with: .errorPage(500))
        let harness = Harness(upstream: upstream)
        let response = await harness.get("/objects?ids=5001,9")
        #expect(response.status == 200)
        #expect(try objectIDs(response) == [5_001])
        #expect(try response.jsonObject()["pending"] as? [Int] == [9])
        #expect(response.headers["Cache-Control"] == "no-store")
    }

    @Test(arguments: [
        ("/objects", "ids"),
        ("/objects?ids=", "ids"),
        ("/objects?ids=1,,2", "ids"),
        ("/objects?ids=1,abc", "ids"),
        ("/objects?ids=0", "ids"),
        ("/objects?ids=+1", "ids"),
        ("/objects?ids=1&ids=2", "ids"),
        ("/objects?ids=1&wait=-1", "wait"),
        ("/objects?ids=1&wait=30001", "wait"),
        ("/objects?ids=1&fields=a.b", "fields"),
        ("/objects?ids=1&limit=3", "limit"),
        ("/objects?ids=" + (1...101).map(String.init).joined(separator: ","), "ids"),
    ])
    func malformedBatchesAreRefusedNamingTheParameter(target: String, parameter: String) async throws {
        let harness = Harness()
        let response = try #require(harness.getImmediately(target))
        #expect(response.status == 400)
        #expect(try response.jsonObject()["parameter"] as? String == parameter)
        #expect(harness.upstream.calls.isEmpty)
    }
}
