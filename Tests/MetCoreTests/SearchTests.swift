import Foundation
import TestKit
import Testing

@testable import MetCore
@testable import MetEngine

// MARK: - Hydration

@Suite("GET /search hydrates the Met's IDs into objects")
struct SearchTests {
    @Test func keepsTheMetsOrderAndFetchesEachRepeatedIDOnce() async throws {
        let upstream = FakeUpstream()
        upstream.answer(SearchSample.v1(), with: SearchSample.ids([30, 10, 20, 10, 30]))
        SearchSample.answerObjects([10, 20, 30], on: upstream)
        let harness = SearchHarness(upstream, mode: .v1)

        let page = try await harness.get("/search?q=cypress").searchPage()
        #expect(page.objects == [30, 10, 20])
        #expect(page.missing.isEmpty && page.withoutImage.isEmpty && page.pending.isEmpty)
        #expect(page.total == 5)
        for id in [10, 20, 30] { #expect(upstream.callCount(for: .object(id: id)) == 1) }
        #expect(upstream.calls.count == 4)
    }

    @Test func aPagedAnswerLinksToItsNextPageAndIsDatedByItsOldestList() async throws {
        let upstream = FakeUpstream()
        upstream.answer(SearchSample.v1(), with: SearchSample.ids([30, 10, 20]))
        SearchSample.answerObjects([10, 20, 30], on: upstream)
        let harness = SearchHarness(upstream, mode: .v1)
        let listFetched = Int(harness.harness.time.now().rounded(.down))

        let first = await harness.get("/search?q=cypress&limit=2")
        let next = try #require(try first.jsonObject()["next"] as? String)
        #expect(first.headers["Link"] == "<\(next)>; rel=\"next\"")
        #expect(first.date == listFetched)
        harness.harness.time.advance(by: 5)
        let again = try #require(harness.getImmediately("/search?q=cypress&limit=2"))
        #expect(again.headers["Link"] == first.headers["Link"])
        #expect(again.date == listFetched)
        #expect(again.headers["Age"] == "5")
        let last = await harness.get(next)
        #expect(last.headers["Link"] == nil)
        #expect(try last.jsonObject()["next"] is NSNull)
    }

    @Test func theRecordsGoOutByteForByte() async throws {
        let upstream = FakeUpstream()
        upstream.answer(SearchSample.v1(), with: SearchSample.ids([436_535]))
        upstream.answer(.object(id: 436_535), with: .json(Sample.object(436_535)))
        let response = await SearchHarness(upstream, mode: .v1).get("/search?q=cypress")
        #expect(response.status == 200)
        #expect(response.headers["Content-Type"] == "application/json; charset=utf-8")
        #expect(response.text.contains(#""objects":[\#(Sample.object(436_535))]"#))
    }

    @Test(arguments: [true, false])
    func classifiesMissingAndWithoutImage(hasImages: Bool) async throws {
        let upstream = FakeUpstream()
        let filters = [RequestTarget.QueryItem(name: "hasImages", value: String(hasImages))]
        upstream.answer(SearchSample.v1(filters: filters), with: SearchSample.ids([1, 2, 3, 4, 5]))
        upstream.answer(.object(id: 1), with: .json(SearchSample.record(1)))
        upstream.answer(.object(id: 2), with: .notFound("ObjectID not found"))
        upstream.answer(.object(id: 3), with: .notFound("Not a valid object"))
        upstream.answer(.object(id: 4), with: .json(SearchSample.record(4, image: false)))
        upstream.answer(.object(id: 5), with: .json(SearchSample.record(5)))
        let harness = SearchHarness(upstream, mode: .v1)

        let page = try await harness.get("/search?q=cypress&hasImages=\(hasImages)").searchPage()
        #expect(page.missing == [2, 3])
        #expect(page.pending.isEmpty)
        if hasImages {
            #expect(page.objects == [1, 5])
            #expect(page.withoutImage == [4])
        } else {
            #expect(page.objects == [1, 4, 5])
            #expect(page.withoutImage.isEmpty)
        }
        #expect(page.query["hasImages"] as? Bool == hasImages)
    }

    @Test func whatIsNotFetchedByTheDeadlineIsPendingAndStillFillsTheCache() async throws {
        let upstream = FakeUpstream()
        upstream.answer(SearchSample.v1(), with: SearchSample.ids([1, 2, 3]))
        SearchSample.answerObjects(1...3, on: upstream)
        let harness = SearchHarness(upstream, mode: .v1)
        // The ID list (through the mirror, which shares its entry) and object 1 are cached first.
        #expect(await harness.get("/public/collection/v1/search?q=cypress&hasImages=true").status == 200)
        #expect(await harness.get("/objects/1").status == 200)

        upstream.hold()
        let search = Task { await harness.get("/search?q=cypress&wait=2000") }
        await upstream.waitForCalls(4)  // objects 2 and 3, held
        harness.time.advance(by: 2)
        let response = await search.value
        let page = try response.searchPage()
        #expect(page.objects == [1])
        #expect(page.pending == [2, 3])
        #expect(response.headers["Cache-Control"] == "no-store")

        // The held fetches finish after the answer went out, and fill the cache.
        upstream.release()
        await harness.waitForBackgroundFills()
        let again = try #require(harness.getImmediately("/search?q=cypress&wait=2000"))
        let complete = try again.searchPage()
        #expect(complete.objects == [1, 2, 3])
        #expect(complete.pending.isEmpty)
        #expect(again.headers["Cache-Control"]?.hasPrefix("max-age=") == true)
        #expect(upstream.calls.count == 4)
        #expect(upstream.callCount(for: .object(id: 2)) == 1)
    }

    @Test func waitZeroAnswersAtOnceWithEverythingUncachedPending() async throws {
        let upstream = FakeUpstream()
        upstream.answer(SearchSample.v1(), with: SearchSample.ids([1, 2]))
        SearchSample.answerObjects(1...2, on: upstream)
        let harness = SearchHarness(upstream, mode: .v1)
        #expect(await harness.get("/public/collection/v1/search?q=cypress&hasImages=true").status == 200)

        upstream.hold()
        let page = try await harness.get("/search?q=cypress&wait=0").searchPage()
        #expect(page.objects.isEmpty)
        #expect(page.pending == [1, 2])
        upstream.release()
        await harness.waitForBackgroundFills()
        #expect(try #require(harness.getImmediately("/search?q=cypress&wait=0")).searchPage().objects == [1, 2])
    }

    @Test func aFailedObjectFetchIsPendingAndNotCached() async throws {
        let upstream = FakeUpstream()
        upstream.answer(SearchSample.v1(), with: SearchSample.ids([1, 2]))
        upstream.answer(.object(id: 1), with: .json(SearchSample.record(1)))
        upstream.answer(.object(id: 2), with: .failure(.unreachable("connection refused")))
        let harness = SearchHarness(upstream, mode: .v1)

        let response = await harness.get("/search?q=cypress")
        let page = try response.searchPage()
        #expect(page.objects == [1])
        #expect(page.pending == [2])
        #expect(response.headers["Cache-Control"] == "no-store")
        #expect(harness.getImmediately("/search?q=cypress") == nil)
    }

    @Test func objectFetchesStayWithinThePacersInFlightLimit() async throws {
        let fake = FakeUpstream()
        let ids = Array(1...6)
        fake.answer(SearchSample.v1(), with: SearchSample.ids(ids))
        SearchSample.answerObjects(ids, on: fake)
        let probe = InFlightProbe(fake)
        let directory = TemporaryDirectory()
        var configuration = ServerConfiguration()
        configuration.upstream.rate = 1_000
        configuration.upstream.burst = 1_000
        configuration.upstream.concurrency = 2
        configuration.upstream.retries = 0
        configuration.cache.dataDirectory = directory.path
        configuration.upstream.searchAPI = .v1
        let service = Harness.service(
            configuration: configuration, upstream: probe, time: ManualTime(), logger: MemoryLog().logger())
        #expect(await service.response(to: .get("/public/collection/v1/search?hasImages=true&q=cypress")).status == 200)

        fake.hold()
        let search = Task { await service.response(to: .get("/search?q=cypress&wait=30000")) }
        await fake.waitForCalls(3)  // the list, then two objects: the limit
        // The other four objects queue at the pacer, and none of them reaches the upstream while
        // the first two hold the slots.
        let pacer = service.engine.pacer
        await waitUntil { pacer.figures.waiting == 4 }
        #expect(pacer.figures.inFlight == 2)
        #expect(fake.calls.count == 3)
        fake.release()
        let page = try await search.value.searchPage()
        #expect(page.objects == ids)
        #expect(probe.most == 2)
        #expect(fake.calls.count == 7)
    }

    @Test(arguments: [
        ("relevance", [1, 2, 3]), ("id", [1, 2, 3]), ("-id", [3, 2, 1]), ("title", [2, 1, 3]),
        ("-title", [3, 1, 2]), ("date", [2, 3, 1]), ("-date", [1, 3, 2]),
    ])
    func sortsThePage(sort: String, expected: [Int]) async throws {
        let upstream = FakeUpstream()
        upstream.answer(SearchSample.v1(), with: SearchSample.ids([1, 2, 3]))
        upstream.answer(.object(id: 1), with: .json(SearchSample.record(1, title: "banana", year: 1900)))
        upstream.answer(.object(id: 2), with: .json(SearchSample.record(2, title: "Apple", year: 1800)))
        upstream.answer(.object(id: 3), with: .json(SearchSample.record(3, title: "cherry", year: 1850)))
        let page = try await SearchHarness(upstream, mode: .v1).get("/search?q=cypress&sort=\(sort)").searchPage()
        #expect(page.objects == expected)
    }

    @Test func titleAndDateSortsOrderOnlyThePage() async throws {
        let upstream = FakeUpstream()
        upstream.answer(SearchSample.v1(), with: SearchSample.ids([1, 2, 3, 4]))
        upstream.answer(.object(id: 1), with: .json(SearchSample.record(1, title: "d", year: nil)))
        upstream.answer(.object(id: 2), with: .json(SearchSample.record(2, title: "c", year: 1900)))
        upstream.answer(.object(id: 3), with: .json(SearchSample.record(3, title: "b", year: 1800)))
        upstream.answer(.object(id: 4), with: .json(SearchSample.record(4, title: "a", year: 1700)))
        let harness = SearchHarness(upstream, mode: .v1)
        #expect(try await harness.get("/search?q=cypress&sort=title&limit=2").searchPage().objects == [2, 1])
        // Records without a date sort last.
        #expect(try await harness.get("/search?q=cypress&sort=date&limit=2").searchPage().objects == [2, 1])
        #expect(try await harness.get("/search?q=cypress&sort=date&offset=2").searchPage().objects == [4, 3])
    }

    @Test func idSortsTheWholeListBeforePaging() async throws {
        let upstream = FakeUpstream()
        upstream.answer(SearchSample.v1(), with: SearchSample.ids([5, 3, 9, 1, 7, 3]))
        SearchSample.answerObjects([1, 3, 5, 7, 9], on: upstream)
        let harness = SearchHarness(upstream, mode: .v1)
        #expect(try await harness.get("/search?q=cypress&sort=id&limit=2").searchPage().objects == [1, 3])
        #expect(try await harness.get("/search?q=cypress&sort=id&limit=2&offset=2").searchPage().objects == [5, 7])
        #expect(try await harness.get("/search?q=cypress&sort=-id&limit=2").searchPage().objects == [9, 7])
        // Five distinct IDs: one page of five is the whole list, so there is no next page.
        let whole = try await harness.get("/search?q=cypress&sort=id&limit=5").searchPage()
        #expect(whole.objects == [1, 3, 5, 7, 9])
        #expect(whole.next == nil)
    }

    @Test func totalAndNextFollowTheList() async throws {
        let upstream = FakeUpstream()
        let filters = [SearchSample.hasImages, .init(name: "isHighlight", value: "true")]
        upstream.answer(SearchSample.v1(filters: filters), with: SearchSample.ids(Array(1...45)))
        SearchSample.answerObjects(1...45, on: upstream)
        let harness = SearchHarness(upstream, mode: .v1)

        let first = try await harness.get("/search?isHighlight=true&q=cypress").searchPage()
        #expect(first.total == 45)
        #expect(first.objects == Array(1...20))
        #expect(first.next == "/search?q=cypress&isHighlight=true&offset=20&limit=20")
        let second = try await harness.get(try #require(first.next)).searchPage()
        #expect(second.objects == Array(21...40))
        #expect(second.offset == 20)
        let last = try await harness.get(try #require(second.next)).searchPage()
        #expect(last.objects == Array(41...45))
        #expect(last.next == nil)

        let custom = try await harness.get(
            "/search?q=cypress&isHighlight=true&sort=-id&fields=title,objectID&wait=100&limit=10"
        ).searchPage()
        #expect(
            custom.next
                == "/search?q=cypress&isHighlight=true&offset=10&limit=10&sort=-id&fields=objectID,title&wait=100")
        #expect(custom.objects == Array((36...45).reversed()))
        #expect(custom.records.allSatisfy { Set($0.keys) == ["objectID", "title"] })
    }

    @Test func aSearchWithNoMatchIsA200WithEmptyLists() async throws {
        let upstream = FakeUpstream()
        upstream.answer(SearchSample.page(0, "noresult"), with: SearchSample.ids([]))
        let harness = SearchHarness(upstream)
        let response = await harness.get("/search?q=noresult")
        let page = try response.searchPage()
        #expect(page.total == 0)
        #expect(page.objects.isEmpty && page.missing.isEmpty && page.withoutImage.isEmpty && page.pending.isEmpty)
        #expect(page.next == nil)
        #expect(try response.jsonObject()["next"] is NSNull)
        #expect(upstream.calls == [SearchSample.page(0, "noresult").cacheKey])
    }

    @Test func theQueryIsEchoedWithTypedValues() async throws {
        let upstream = FakeUpstream()
        let filters: [RequestTarget.QueryItem] = [
            .init(name: "dateBegin", value: "-100"), .init(name: "dateEnd", value: "100"),
            .init(name: "departmentId", value: "11"), SearchSample.hasImages,
            .init(name: "medium", value: "Paintings|Silk"),
        ]
        upstream.answer(SearchSample.v1("sun", filters: filters), with: SearchSample.ids([]))
        let harness = SearchHarness(upstream, mode: .v1)
        let page = try await harness.get(
            "/search?q=sun&medium=Paintings|Silk&departmentId=11&dateEnd=100&dateBegin=-100"
        ).searchPage()
        #expect(page.query["q"] as? String == "sun")
        #expect(page.query["hasImages"] as? Bool == true)
        #expect(page.query["departmentId"] as? Int == 11)
        #expect(page.query["dateBegin"] as? Int == -100)
        #expect(page.query["dateEnd"] as? Int == 100)
        #expect(page.query["medium"] as? String == "Paintings|Silk")
    }

    @Test func aRepeatedSearchIsAnsweredOnTheLoopFromTheCache() async throws {
        let upstream = FakeUpstream()
        upstream.answer(SearchSample.page(0), with: SearchSample.ids([1, 2]))
        SearchSample.answerObjects(1...2, on: upstream)
        let harness = SearchHarness(upstream)
        #expect(harness.getImmediately("/search?q=cypress") == nil)  // nothing cached yet

        let first = await harness.get("/search?q=cypress")
        #expect(first.headers["Cache-Status"] == "TheMet; fwd=uri-miss; stored")
        let calls = upstream.calls
        #expect(calls.count == 3)
        harness.time.advance(by: 10)
        let second = try #require(harness.getImmediately("/search?q=cypress"))
        #expect(second.status == 200)
        #expect(second.body == first.body)
        #expect(second.headers["Cache-Status"]?.hasPrefix("TheMet; hit; ttl=") == true)
        #expect(second.headers["Age"] == "10")
        #expect(second.headers["ETag"] == first.headers["ETag"])
        #expect(upstream.calls == calls)
    }

    @Test func ifNoneMatchGetsA304OnBothPaths() async throws {
        let upstream = FakeUpstream()
        upstream.answer(SearchSample.page(0), with: SearchSample.ids([1]))
        SearchSample.answerObjects([1], on: upstream)
        let harness = SearchHarness(upstream)
        let first = await harness.get("/search?q=cypress")
        let etag = try #require(first.headers["ETag"])

        let immediate = try #require(harness.getImmediately("/search?q=cypress", headers: ["If-None-Match": etag]))
        #expect(immediate.status == 304)
        #expect(immediate.body.isEmpty)
        #expect(immediate.headers["ETag"] == etag)
        #expect(await harness.get("/search?q=cypress", headers: ["If-None-Match": etag]).status == 304)
        let other = await harness.get("/search?q=cypress", headers: ["If-None-Match": "\"other\""])
        #expect(other.status == 200)
        #expect(upstream.calls.count == 2)
    }

    @Test func theETagFollowsTheRecordsNotJustTheIDs() async throws {
        let upstream = FakeUpstream()
        upstream.answer(SearchSample.page(0), with: SearchSample.ids([1]))
        upstream.answer(.object(id: 1), with: .json(SearchSample.record(1, title: "Cypresses")))
        let harness = SearchHarness(upstream) { $0.cache.freshness.object = 60 }
        let first = await harness.get("/search?q=cypress")
        // The record changes upstream; once its entry expires, the same page has a new body and tag.
        upstream.answer(.object(id: 1), with: .json(SearchSample.record(1, title: "Cypresses (retitled)")))
        harness.time.advance(by: 61)
        let second = await harness.get("/search?q=cypress")
        #expect(second.body != first.body)
        #expect(second.headers["ETag"] != first.headers["ETag"])
        let other = await harness.get("/search?q=cypress&limit=5")
        #expect(other.headers["ETag"] != second.headers["ETag"])  // another page of the same list
    }

    @Test func anUpstreamFailureOfTheListIsAProblem() async throws {
        let upstream = FakeUpstream()
        upstream.answer(SearchSample.page(0), with: .errorPage(500))
        let harness = SearchHarness(upstream)
        let response = await harness.get("/search?q=cypress")
        #expect(response.status == 502)
        #expect(response.problemCode == "upstream_error")
    }
}
