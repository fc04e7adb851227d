import Testing

@testable import MetCore
@testable import MetEngine

@Suite("Negative caching of the Met's 404s")
struct NegativeCachingTests {
    private func harness(_ message: String) -> Harness {
        let upstream = FakeUpstream([Sample.objectKey(999): .notFound(message)])
        return Harness(upstream: upstream) { configuration in
            configuration.cache.freshness.notFound = 30
            configuration.cache.freshness.object = 1_000
        }
    }

    @Test(arguments: ["ObjectID not found", "Not a valid object"])
    func aMet404IsAnObjectNotFoundProblemWithTheMessage(message: String) async throws {
        let harness = harness(message)
        let response = await harness.get("/objects/999")
        #expect(response.status == 404)
        #expect(response.problemCode == "object_not_found")
        #expect(response.headers["Content-Type"] == "application/problem+json")
        let document = try response.jsonObject()
        #expect((document["detail"] as? String)?.contains(message) == true)
        #expect((document["detail"] as? String)?.contains("999") == true)
        #expect(response.headers["Cache-Control"] == "max-age=30, stale-if-error=604800")
        #expect(response.headers["Cache-Status"] == "TheMet; fwd=uri-miss; stored")
    }

    @Test(arguments: ["ObjectID not found", "Not a valid object"])
    func aMet404IsRememberedUntilTheNotFoundTTL(message: String) async throws {
        let harness = harness(message)
        let first = await harness.get("/objects/999")
        harness.time.advance(by: 29)
        let remembered = try #require(harness.getImmediately("/objects/999"))
        #expect(remembered.status == 404)
        #expect(remembered.problemCode == "object_not_found")
        #expect(remembered.headers["Cache-Status"] == "TheMet; hit; ttl=1")
        #expect(remembered.body == first.body)
        #expect(harness.upstream.calls.count == 1)

        harness.time.advance(by: 1)
        #expect(harness.getImmediately("/objects/999") == nil)
        _ = await harness.get("/objects/999")
        #expect(harness.upstream.calls.count == 2)
    }

    @Test(arguments: ["ObjectID not found", "Not a valid object"])
    func theMirrorRouteReturnsTheMetsOwn404(message: String) async {
        let harness = harness(message)
        let mirror = await harness.get("/public/collection/v1/objects/999")
        #expect(mirror.status == 404)
        #expect(mirror.text == #"{"message":"\#(message)"}"#)
        #expect(mirror.headers["Content-Type"] == "application/json; charset=utf-8")
        // The same negative entry serves both routes.
        let ours = await harness.get("/objects/999")
        #expect(ours.problemCode == "object_not_found")
        #expect(harness.upstream.calls.count == 1)
    }

    /// A remembered 404 is presented once a second and shared, as a 200 is, in each of its two
    /// forms: the problem and the mirror's copy of the Met's body never stand in for each other.
    @Test func aRemembered404IsSharedInEachOfItsForms() async throws {
        let harness = harness("ObjectID not found")
        _ = await harness.get("/objects/999")
        let problem = try #require(harness.getImmediately("/objects/999"))
        let problemAgain = try #require(harness.getImmediately("/objects/999"))
        let mirror = try #require(harness.getImmediately("/public/collection/v1/objects/999"))
        let mirrorAgain = try #require(harness.getImmediately("/public/collection/v1/objects/999"))
        #expect(problem.problemCode == "object_not_found")
        #expect(problemAgain.body == problem.body)
        let sharedProblem = try #require(problem.shared)
        #expect(problemAgain.shared === sharedProblem)
        #expect(mirror.text == #"{"message":"ObjectID not found"}"#)
        #expect(mirrorAgain.body == mirror.body)
        let sharedMirror = try #require(mirror.shared)
        #expect(mirrorAgain.shared === sharedMirror)
        // The forms in turn: each made anew, as the other replaced it.
        let problemLater = try #require(harness.getImmediately("/objects/999"))
        #expect(problemLater.body == problem.body)
        #expect(problemLater.shared !== sharedProblem)
        harness.time.advance(by: 1)
        let nextSecond = try #require(harness.getImmediately("/objects/999"))
        #expect(nextSecond.shared !== problemLater.shared)
        #expect(nextSecond.headers["Cache-Status"] == "TheMet; hit; ttl=29")
    }

    @Test func a404NeverAnswers304() async throws {
        let harness = harness("ObjectID not found")
        let first = await harness.get("/public/collection/v1/objects/999")
        let etag = try #require(first.headers["ETag"])
        let again = await harness.get("/public/collection/v1/objects/999", headers: ["If-None-Match": etag])
        #expect(again.status == 404)
        #expect(await harness.get("/objects/999", headers: ["If-None-Match": "*"]).status == 404)
    }

    @Test func a404WithoutAJSONMessageIsMalformedAndNotStored() async {
        let upstream = FakeUpstream([Sample.objectKey(5): .json("<html>Not Found</html>", status: 404)])
        let harness = Harness(upstream: upstream)
        let response = await harness.get("/objects/5")
        #expect(response.status == 502)
        #expect(response.problemCode == "upstream_malformed")
        _ = await harness.get("/objects/5")
        #expect(upstream.calls.count == 2)
    }

    @Test func aNegativeEntryStandsInWhenTheUpstreamFails() async {
        let harness = harness("Not a valid object")
        _ = await harness.get("/objects/999")
        harness.time.advance(by: 31)
        harness.upstream.answer(.object(id: 999), with: .failure(.timeout))
        let response = await harness.get("/objects/999")
        #expect(response.status == 404)
        #expect(response.problemCode == "object_not_found")
        #expect(response.cacheOutcome == .stale)
    }
}
