import TestKit
import Testing

@testable import MetCore
@testable import MetEngine

/// One way the upstream can fail, and what a client sees when nothing usable is cached.
struct FailureCase: Sendable, CustomTestStringConvertible {
    var name: String
    var answer: FakeUpstream.Answer
    var status: Int
    var code: String

    var testDescription: String { name }

    static let all: [FailureCase] = [
        FailureCase(
            name: "unreachable", answer: .failure(.unreachable("connection refused")), status: 502,
            code: "upstream_unreachable"),
        FailureCase(name: "500", answer: .errorPage(500), status: 502, code: "upstream_error"),
        FailureCase(name: "502", answer: .errorPage(502), status: 502, code: "upstream_error"),
        FailureCase(name: "503", answer: .errorPage(503), status: 503, code: "upstream_unavailable"),
        FailureCase(name: "timeout", answer: .failure(.timeout), status: 504, code: "upstream_timeout"),
        FailureCase(
            name: "200 not JSON", answer: .json("<html>Hello World</html>"), status: 502,
            code: "upstream_malformed"),
        FailureCase(
            name: "200 wrong objectID", answer: .json(Sample.object(2)), status: 502,
            code: "upstream_malformed"),
        FailureCase(
            name: "200 truncated", answer: .json(String(Sample.object(1).dropLast(10))), status: 502,
            code: "upstream_malformed"),
        FailureCase(name: "403 block page", answer: .blockPage, status: 503, code: "upstream_blocked"),
        FailureCase(
            name: "403 JSON", answer: .json(#"{"message":"Forbidden"}"#, status: 403), status: 502,
            code: "upstream_error"),
        FailureCase(
            name: "429", answer: .json(#"{"message":"slow down"}"#, status: 429), status: 502,
            code: "upstream_error"),
    ]
}

@Suite("Upstream failures, stale-if-error and the firewall block")
struct UpstreamFailureTests {
    private static let target = "/objects/1"
    private static let resource = MetResource.object(id: 1)

    private func harness(_ answer: FakeUpstream.Answer) -> Harness {
        let upstream = FakeUpstream()
        upstream.answer(Self.resource, with: answer)
        return Harness(upstream: upstream) { configuration in
            configuration.cache.freshness.object = 100
            configuration.cache.freshness.staleIfError = 1_000
            configuration.upstream.blockCooldown = 60
        }
    }

    @Test(arguments: FailureCase.all)
    func anUncachedFailureIsTheMatchingProblem(failure: FailureCase) async throws {
        let harness = harness(failure.answer)
        let response = await harness.get(Self.target)
        #expect(response.status == failure.status)
        #expect(response.problemCode == failure.code)
        #expect(response.headers["Cache-Control"] == "no-store")
        #expect(harness.upstream.calls.count == 1)
        #expect(harness.service.engine.cache.statistics.entries == 0)
    }

    @Test(arguments: FailureCase.all)
    func aFailureIsNeverStored(failure: FailureCase) async {
        let harness = harness(failure.answer)
        _ = await harness.get(Self.target)
        #expect(harness.getImmediately(Self.target) == nil)
        harness.time.advance(by: 61)  // past any block, so the next request may call again
        harness.upstream.answer(Self.resource, with: .json(Sample.object(1)))
        let next = await harness.get(Self.target)
        #expect(next.status == 200)
        #expect(next.cacheOutcome == .miss)
        #expect(harness.upstream.calls.count == 2)
    }

    @Test(arguments: FailureCase.all)
    func anExpiredEntryStandsInWhenTheUpstreamFails(failure: FailureCase) async throws {
        let harness = harness(.json(Sample.object(1)))
        let fresh = await harness.get(Self.target)
        harness.time.advance(by: 150)
        harness.upstream.answer(Self.resource, with: failure.answer)

        let stale = await harness.get(Self.target)
        #expect(stale.status == 200)
        #expect(stale.body == fresh.body)
        #expect(stale.headers["ETag"] == fresh.headers["ETag"])
        let cacheStatus = try #require(stale.headers["Cache-Status"])
        #expect(cacheStatus.contains("fwd=stale"))
        #expect(cacheStatus == "TheMet; fwd=stale; ttl=-50; detail=upstream-failed")
        #expect(stale.headers["Cache-Control"] == "max-age=100, stale-if-error=1000")
        #expect(stale.headers["Age"] == "150")
        // Past the stale-if-error window the extension is left out.
        harness.time.advance(by: 1_000)
        #expect(
            Presenter.cacheControl(
                try #require(harness.service.engine.cache.entry(for: Sample.objectKey(1))), at: harness.time.now())
                == "max-age=100")
        #expect(stale.cacheOutcome == .stale)
        #expect(harness.upstream.calls.count == 2)
        #expect(harness.service.engine.cache.statistics.staleServed == 1)
        // A stale entry is never served without asking first.
        #expect(harness.getImmediately(Self.target) == nil)
    }

    @Test(arguments: FailureCase.all)
    func pastTheStaleWindowTheFailureIsAProblem(failure: FailureCase) async {
        let harness = harness(.json(Sample.object(1)))
        _ = await harness.get(Self.target)
        harness.time.advance(by: 100 + 1_000)
        harness.upstream.answer(Self.resource, with: failure.answer)
        let response = await harness.get(Self.target)
        #expect(response.status == failure.status)
        #expect(response.problemCode == failure.code)
        #expect(harness.service.engine.cache.statistics.staleServed == 0)
    }

    @Test func aBlockPausesUpstreamCallsUntilTheCooldownEnds() async throws {
        let harness = harness(.blockPage)
        harness.upstream.answer(.object(id: 2), with: .json(Sample.object(2)))

        let blocked = await harness.get(Self.target)
        #expect(blocked.status == 503)
        #expect(blocked.problemCode == "upstream_blocked")
        #expect(blocked.headers["Retry-After"] == "60")

        // While blocked, no request reaches the upstream, whatever it asks for.
        harness.time.advance(by: 45)
        let other = await harness.get("/objects/2")
        #expect(other.problemCode == "upstream_blocked")
        #expect(other.headers["Retry-After"] == "15")
        #expect(harness.upstream.calls == [Sample.objectKey(1)])

        harness.time.advance(by: 14.5)
        #expect(await harness.get("/objects/2").headers["Retry-After"] == "1")
        #expect(harness.upstream.calls.count == 1)

        harness.time.advance(by: 0.5)
        let resumed = await harness.get("/objects/2")
        #expect(resumed.status == 200)
        #expect(harness.upstream.calls == [Sample.objectKey(1), Sample.objectKey(2)])
    }

    @Test func theLogSaysWhenABlockStartsAndEndsAndDebugSaysWhatWasDecided() async throws {
        let harness = harness(.blockPage)
        harness.upstream.answer(.object(id: 2), with: .json(Sample.object(2)))
        _ = await harness.get(Self.target)
        let started = harness.log.lines.filter { $0.contains("firewall blocked this server") }
        #expect(started.count == 1)
        #expect(started.first?.hasPrefix("warning: ") == true)
        #expect(started.first?.contains(Sample.objectKey(1)) == true)
        #expect(started.first?.contains("paused for 60 s") == true)
        harness.time.advance(by: 60)
        #expect(await harness.get("/objects/2").status == 200)
        #expect(harness.log.lines.contains { $0.hasPrefix("info: upstream: the Met answers again") })
        #expect(harness.log.lines.contains { $0.hasPrefix("debug: upstream \(Sample.objectKey(2)): 200,") })
        #expect(harness.log.lines.contains { $0 == "debug: cache \(Sample.objectKey(2)): miss (upstream)" })
    }

    @Test func aBlockServesStaleEntriesWithoutCallingTheUpstream() async {
        let harness = harness(.json(Sample.object(1)))
        harness.upstream.answer(.object(id: 2), with: .blockPage)
        _ = await harness.get(Self.target)
        harness.time.advance(by: 150)
        #expect(await harness.get("/objects/2").status == 503)
        let stale = await harness.get(Self.target)
        #expect(stale.status == 200)
        #expect(stale.cacheOutcome == .stale)
        #expect(harness.upstream.calls == [Sample.objectKey(1), Sample.objectKey(2)])
    }

    @Test(arguments: [("text/html; charset=utf-8", "<p>no</p>"), (nil, "  \n<html></html>"), ("TEXT/HTML", "x")])
    func a403LooksLikeABlockWhenItIsHTML(contentType: String?, body: String) async {
        let reply = UpstreamReply(status: 403, contentType: contentType, body: Array(body.utf8))
        let response = await harness(.reply(reply)).get(Self.target)
        #expect(response.problemCode == "upstream_blocked")
    }

    @Test func failuresAreLoggedAsWarnings() async throws {
        let harness = harness(.errorPage(500))
        _ = await harness.get(Self.target)
        let line = try #require(harness.log.lines.first { $0.hasPrefix("warning: ") })
        #expect(line.contains("/public/collection/v1/objects/1"))
        #expect(line.contains("HTTP 500"))
        #expect(!harness.log.lines.contains { $0.hasPrefix("error: ") })
    }

    @Test func aRecordThatLater404sReplacesTheCachedRecord() async {
        let harness = harness(.json(Sample.object(1)))
        _ = await harness.get(Self.target)
        harness.time.advance(by: 150)
        harness.upstream.answer(Self.resource, with: .notFound("Not a valid object"))
        let gone = await harness.get(Self.target)
        #expect(gone.status == 404)
        #expect(gone.problemCode == "object_not_found")
        #expect(gone.cacheOutcome == .miss)
    }

    @Test func aMet404ForAListIsAnUpstreamError() async throws {
        let upstream = FakeUpstream([MetResource.basePath + "/objects": .notFound()])
        let response = await Harness(upstream: upstream).get("/public/collection/v1/objects")
        #expect(response.status == 502)
        #expect(
            try response.jsonObject()["message"] as? String
                == "The Met answered HTTP 404 while fetching /public/collection/v1/objects from the Met.")
    }

    @Test(arguments: [
        (MetResource.objectList(departmentIds: [], metadataDate: nil), #"{"objectIDs":[1]}"#),
        (.objectList(departmentIds: [], metadataDate: nil), #"{"total":"1","objectIDs":[1]}"#),
        (.departments, #"{"departments":[{"departmentId":1}]}"#),
        (.departments, "[]"),
        (.object(id: 1), #"{"title":"no id"}"#),
        (.object(id: 1), #"{"objectID":"1"}"#),
    ])
    func aBodyOfTheWrongShapeIsMalformed(resource: MetResource, body: String) {
        let reply = UpstreamReply(status: 200, contentType: "application/json", body: Array(body.utf8))
        guard case .failure(.malformed) = resource.judge(reply) else {
            Issue.record("accepted \(body) for \(resource)")
            return
        }
    }

    @Test(arguments: [
        (MetResource.objectList(departmentIds: [], metadataDate: nil), #"{"total":0,"objectIDs":null}"#),
        (.objectList(departmentIds: [999], metadataDate: nil), #"{"total":0,"objectIDs":[]}"#),
        (.object(id: 1), #"{"objectID":1,"unknown":{"kept":true}}"#),
        (.departments, Sample.departments),
    ])
    func aBodyOfTheRightShapeIsAccepted(resource: MetResource, body: String) {
        let reply = UpstreamReply(status: 200, contentType: "application/json", body: Array(body.utf8))
        #expect(
            resource.judge(reply)
                == .success(
                    CacheableAnswer(
                        status: 200, body: Array(body.utf8),
                        details: EntryDetails.read(Array(body.utf8), kind: resource.kind))))
    }
}
