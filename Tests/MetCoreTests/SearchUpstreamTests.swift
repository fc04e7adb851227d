import Testing

@testable import MetCore
@testable import MetEngine

@Suite("/search upstream: v1.1 pages, the 10,000 window, v1 ↔ v1.1 fallback, the mirror")
struct SearchUpstreamTests {
    /// The number of upstream calls to either search generation.
    private func searchCalls(_ upstream: FakeUpstream) -> Int {
        upstream.calls.filter { $0.hasPrefix(SearchAPI.v1.path) || $0.hasPrefix(SearchAPI.v1_1.path) }.count
    }

    /// A v1.1 search of `total` hits whose hit at position `p` is object `id(p)`; pages from
    /// `pages` are answered.
    private func pagedUpstream(total: Int, pages: Range<Int>, id: (Int) -> Int = { $0 + 1 }) -> FakeUpstream {
        let upstream = FakeUpstream()
        let reachable = min(total, SearchAPI.window)
        for index in pages {
            let start = index * SearchAPI.pageLimit
            let end = min(start + SearchAPI.pageLimit, reachable)
            let ids = start < end ? (start..<end).map(id) : []
            upstream.answer(SearchSample.page(index), with: SearchSample.ids(ids, total: total))
        }
        return upstream
    }

    @Test func v11IsReadInAlignedPagesOf500() async throws {
        let upstream = pagedUpstream(total: 1_200, pages: 0..<3)
        SearchSample.answerObjects(1...1_200, on: upstream)
        let harness = SearchHarness(upstream, mode: .v1_1)

        let first = try await harness.get("/search?q=cypress").searchPage()
        #expect(first.objects == Array(1...20))
        #expect(first.total == 1_200)
        #expect(upstream.calls.first == SearchSample.page(0).cacheKey)

        // The next page comes from the same upstream page: no search call.
        let second = try await harness.get(try #require(first.next)).searchPage()
        #expect(second.objects == Array(21...40))
        #expect(searchCalls(upstream) == 1)

        // A page across two upstream pages reads the second one once.
        let across = try await harness.get("/search?q=cypress&offset=490&limit=20").searchPage()
        #expect(across.objects == Array(491...510))
        #expect(try await harness.get("/search?q=cypress&offset=500&limit=10").searchPage().objects == Array(501...510))
        #expect(searchCalls(upstream) == 2)

        let last = try await harness.get("/search?q=cypress&offset=1190").searchPage()
        #expect(last.objects == Array(1_191...1_200))
        #expect(last.next == nil)
        for index in 0..<3 { #expect(upstream.callCount(for: SearchSample.page(index)) == 1) }
        #expect(searchCalls(upstream) == 3)
    }

    @Test func v11PagesStopAtThe10000HitWindow() async throws {
        let upstream = pagedUpstream(total: 25_000, pages: 19..<20)
        upstream.answer(SearchSample.page(0), with: SearchSample.ids(Array(1...500), total: 25_000))
        SearchSample.answerObjects(9_941...10_000, on: upstream)
        let harness = SearchHarness(upstream, mode: .v1_1)

        let before = try await harness.get("/search?q=cypress&offset=9960").searchPage()
        #expect(before.objects == Array(9_961...9_980))
        #expect(before.total == 25_000)
        #expect(before.next == "/search?q=cypress&offset=9980&limit=20")
        let end = try await harness.get(try #require(before.next)).searchPage()
        #expect(end.objects == Array(9_981...10_000))
        #expect(end.next == nil)
        let cut = try await harness.get("/search?q=cypress&offset=9990").searchPage()
        #expect(cut.objects == Array(9_991...10_000))
        #expect(cut.next == nil)
        #expect(upstream.calls.filter { $0.hasPrefix(SearchAPI.v1_1.path) } == [SearchSample.page(19).cacheKey])

        // Beyond the window there is nothing to page, but the total is still the Met's.
        let beyond = try await harness.get("/search?q=cypress&offset=10000").searchPage()
        #expect(beyond.objects.isEmpty && beyond.pending.isEmpty)
        #expect(beyond.total == 25_000)
        #expect(beyond.next == nil)
        #expect(upstream.calls.count == 42)  // two search pages and 40 objects
    }

    @Test(arguments: [(1_200, 3), (25_000, 20)])
    func sortingByIDReadsEveryPageUpToTheWindowAndPagesAreStable(total: Int, pages: Int) async throws {
        // The Met's order is descending here, so sorting has something to do.
        let upstream = pagedUpstream(total: total, pages: 0..<pages) { 100_000 - $0 }
        let reachable = min(total, SearchAPI.window)
        let smallest = 100_000 - reachable + 1
        SearchSample.answerObjects(smallest..<(smallest + 40), on: upstream)
        SearchSample.answerObjects(99_981...100_000, on: upstream)
        let harness = SearchHarness(upstream, mode: .v1_1)

        let first = try await harness.get("/search?q=cypress&sort=id").searchPage()
        #expect(first.objects == Array(smallest..<(smallest + 20)))
        #expect(first.total == total)
        #expect(searchCalls(upstream) == pages)
        for index in 0..<pages { #expect(upstream.callCount(for: SearchSample.page(index)) == 1) }

        let second = try await harness.get(try #require(first.next)).searchPage()
        #expect(second.objects == Array((smallest + 20)..<(smallest + 40)))
        let descending = try await harness.get("/search?q=cypress&sort=-id").searchPage()
        #expect(descending.objects == Array((99_981...100_000).reversed()))
        #expect(searchCalls(upstream) == pages)

        let last = try await harness.get("/search?q=cypress&sort=id&offset=\(reachable - 20)").searchPage()
        #expect(last.next == nil)
    }

    @Test func autoFallsBackToV1WhenV11IsAbsentAndRemembersIt() async throws {
        let upstream = FakeUpstream()
        upstream.answer(SearchSample.page(0), with: .json(#"{"message":"Not Found"}"#, status: 404))
        upstream.answer(SearchSample.v1(), with: SearchSample.ids([1]))
        upstream.answer(SearchSample.v1("wheat"), with: SearchSample.ids([1]))
        SearchSample.answerObjects([1], on: upstream)
        let harness = SearchHarness(upstream, mode: .auto)

        #expect(try await harness.get("/search?q=cypress").searchPage().objects == [1])
        #expect(
            upstream.calls == [SearchSample.page(0).cacheKey, SearchSample.v1().cacheKey, Sample.objectKey(1)])
        #expect(harness.harness.log.lines.contains { $0.contains("using \(SearchAPI.v1.path) from now on") })

        #expect(try await harness.get("/search?q=wheat").searchPage().objects == [1])
        #expect(upstream.calls.last == SearchSample.v1("wheat").cacheKey)
        #expect(upstream.callCount(for: SearchSample.page(0, "wheat")) == 0)
    }

    @Test func autoGoesBackToV11WhenV1IsRetired() async throws {
        let retired =
            #"{"message":"/public/collection/v1/search was retired on 2026-10-01.","#
            + #""replacement":"/public/collection/v1.1/search","documentation":"https://metmuseum.github.io/"}"#
        let upstream = FakeUpstream()
        upstream.answer(SearchSample.page(0), with: .json(#"{"message":"Not Found"}"#, status: 404))
        upstream.answer(SearchSample.v1(), with: SearchSample.ids([1]))
        upstream.answer(SearchSample.v1("wheat"), with: .json(retired, status: 410))
        upstream.answer(SearchSample.page(0, "wheat"), with: SearchSample.ids([2]))
        upstream.answer(SearchSample.page(0, "sun"), with: SearchSample.ids([2]))
        SearchSample.answerObjects([1, 2], on: upstream)
        let harness = SearchHarness(upstream, mode: .auto)
        #expect(try await harness.get("/search?q=cypress").searchPage().objects == [1])  // now on v1

        let before = upstream.calls.count
        #expect(try await harness.get("/search?q=wheat").searchPage().objects == [2])
        #expect(
            Array(upstream.calls.dropFirst(before)) == [
                SearchSample.v1("wheat").cacheKey, SearchSample.page(0, "wheat").cacheKey, Sample.objectKey(2),
            ])

        #expect(try await harness.get("/search?q=sun").searchPage().objects == [2])
        #expect(upstream.calls.last == SearchSample.page(0, "sun").cacheKey)
        #expect(upstream.callCount(for: SearchSample.v1("sun")) == 0)
    }

    @Test(arguments: [(SearchAPIMode.v1_1, 404), (.v1, 410)])
    func aFixedGenerationDoesNotFallBack(mode: SearchAPIMode, status: Int) async throws {
        let upstream = FakeUpstream()
        upstream.answer(SearchSample.page(0), with: .json(#"{"message":"gone"}"#, status: status))
        upstream.answer(SearchSample.v1(), with: .json(#"{"message":"gone"}"#, status: status))
        let harness = SearchHarness(upstream, mode: mode)
        for _ in 0..<2 {
            let response = await harness.get("/search?q=cypress")
            #expect(response.status == 502)
            #expect(response.problemCode == "upstream_error")
            #expect(response.text.contains("HTTP \(status)"))
        }
        let asked = mode == .v1 ? SearchSample.v1() : SearchSample.page(0)
        #expect(upstream.calls == [asked.cacheKey, asked.cacheKey])
    }

    @Test func theV1MirrorIsByteForByteAndSharesEquivalentQueries() async throws {
        let body = "{ \"total\" : 2, \"objectIDs\" : [ 437980,436535 ] }\n"
        let upstream = FakeUpstream()
        upstream.answer(SearchSample.v1(), with: .json(body))
        SearchSample.answerObjects([436_535, 437_980], on: upstream)
        let harness = SearchHarness(upstream, mode: .v1)

        let first = await harness.get("/public/collection/v1/search?q=cypress&hasImages=true")
        #expect(first.status == 200)
        #expect(first.body == Array(body.utf8))
        #expect(first.headers["Content-Type"] == "application/json; charset=utf-8")
        for equivalent in [
            "/public/collection/v1/search?hasImages=true&q=cypress",
            "/public/collection/v1/search?hasImages=true&q=cypress&unknown=1",
            "/public/collection/v1/search?q=cypress&hasImages=false&hasImages=true",
        ] {
            let response = try #require(harness.getImmediately(equivalent), "\(equivalent) needed the upstream")
            #expect(response.body == Array(body.utf8))
        }
        // /search reads the same entry.
        #expect(try await harness.get("/search?q=cypress").searchPage().objects == [437_980, 436_535])
        #expect(upstream.callCount(for: SearchSample.v1()) == 1)
    }

    @Test func theV11MirrorPassesOffsetAndLimitAndSharesPagesWithSearch() async throws {
        let body = #"{"total":2,"objectIDs":[437980,436535]}"#
        let upstream = FakeUpstream()
        upstream.answer(SearchSample.page(0), with: .json(body))
        let small = MetResource.search(
            .v1_1, filters: [SearchSample.hasImages], q: "cypress", page: (offset: 0, limit: 1))
        upstream.answer(small, with: .json(#"{"total":2,"objectIDs":[437980]}"#))
        SearchSample.answerObjects([436_535, 437_980], on: upstream)
        let harness = SearchHarness(upstream, mode: .auto)

        let mirror = await harness.get("/public/collection/v1.1/search?limit=500&q=cypress&offset=0&hasImages=true")
        #expect(mirror.body == Array(body.utf8))
        let paged = await harness.get("/public/collection/v1.1/search?q=cypress&hasImages=true&offset=0&limit=1")
        #expect(paged.text == #"{"total":2,"objectIDs":[437980]}"#)
        #expect(upstream.calls == [SearchSample.page(0).cacheKey, small.cacheKey])

        #expect(try await harness.get("/search?q=cypress").searchPage().objects == [437_980, 436_535])
        #expect(upstream.callCount(for: SearchSample.page(0)) == 1)
    }
}
