import Testing

@testable import MetCore
@testable import MetEngine

@Suite("/search parameters: validation and canonical form")
struct SearchQueryTests {
    /// A query, and the problem code and parameter its 400 names.
    @Test(arguments: [
        ("", "invalid_parameter", "q"),
        ("q=", "invalid_parameter", "q"),
        ("q=%20+", "invalid_parameter", "q"),
        ("title=true", "invalid_parameter", "q"),
        ("q=a&color=red", "unknown_parameter", "color"),
        ("q=a&isPublicDomain=true", "invalid_parameter", "isPublicDomain"),
        ("q=a&facets=department", "invalid_parameter", "facets"),
        ("q=a&source=disk", "invalid_parameter", "source"),
        ("q=a&source=local&facets=department,department", "invalid_parameter", "facets"),
        ("q=a&source=local&facets=color", "invalid_parameter", "facets"),
        ("q=a&source=local&facets=", "invalid_parameter", "facets"),
        ("source=local&isPublicDomain=yes", "invalid_parameter", "isPublicDomain"),
        ("source=met", "invalid_parameter", "q"),
        ("q=a&at=3", "invalid_parameter", "at"),
        ("source=local&q=a+b+c+d+e+f+g+h+i+j+k+l+m+n+o+p+q", "invalid_parameter", "q"),
        ("source=local&at=-3", "invalid_parameter", "at"),
        ("source=local&at=1234567890123456789", "invalid_parameter", "at"),
        ("q=a&Q=b", "unknown_parameter", "Q"),
        ("q=a&q=b", "invalid_parameter", "q"),
        ("q=a&limit=5&limit=5", "invalid_parameter", "limit"),
        ("q=a&hasImages=1", "invalid_parameter", "hasImages"),
        ("q=a&isHighlight=yes", "invalid_parameter", "isHighlight"),
        ("q=a&isOnView=", "invalid_parameter", "isOnView"),
        ("q=a&artistOrCulture=yes", "invalid_parameter", "artistOrCulture"),
        ("q=a&tags=0", "invalid_parameter", "tags"),
        ("q=a&title=false%20", "invalid_parameter", "title"),
        ("q=a&departmentId=0", "invalid_parameter", "departmentId"),
        ("q=a&departmentId=-1", "invalid_parameter", "departmentId"),
        ("q=a&departmentId=abc", "invalid_parameter", "departmentId"),
        ("q=a&departmentId=1.5", "invalid_parameter", "departmentId"),
        ("q=a&medium=", "invalid_parameter", "medium"),
        ("q=a&medium=Paintings||Silk", "invalid_parameter", "medium"),
        ("q=a&medium=Silk|", "invalid_parameter", "medium"),
        ("q=a&geoLocation=%7C", "invalid_parameter", "geoLocation"),
        ("q=a&geoLocation=%20", "invalid_parameter", "geoLocation"),
        ("q=a&dateBegin=1700", "invalid_parameter", "dateEnd"),
        ("q=a&dateEnd=1800", "invalid_parameter", "dateBegin"),
        ("q=a&dateBegin=1800&dateEnd=1700", "invalid_parameter", "dateEnd"),
        ("q=a&dateBegin=abc&dateEnd=1800", "invalid_parameter", "dateBegin"),
        ("q=a&dateBegin=1700&dateEnd=18th", "invalid_parameter", "dateEnd"),
        ("q=a&offset=-1", "invalid_parameter", "offset"),
        ("q=a&offset=abc", "invalid_parameter", "offset"),
        ("q=a&offset=1000001", "invalid_parameter", "offset"),
        ("q=a&limit=0", "invalid_parameter", "limit"),
        ("q=a&limit=101", "invalid_parameter", "limit"),
        ("q=a&limit=", "invalid_parameter", "limit"),
        ("q=a&sort=name", "invalid_parameter", "sort"),
        ("q=a&sort=ID", "invalid_parameter", "sort"),
        ("q=a&fields=", "invalid_parameter", "fields"),
        ("q=a&fields=title,,objectID", "invalid_parameter", "fields"),
        ("q=a&fields=title.name", "invalid_parameter", "fields"),
        ("q=a&wait=-1", "invalid_parameter", "wait"),
        ("q=a&wait=30001", "invalid_parameter", "wait"),
        ("q=a&wait=1.5", "invalid_parameter", "wait"),
    ])
    func aBadParameterIsA400NamingIt(query: String, code: String, parameter: String) async throws {
        let harness = SearchHarness()
        let response = try #require(harness.getImmediately("/search?\(query)"))
        #expect(response.status == 400)
        #expect(response.problemCode == code)
        #expect(try response.jsonObject()["parameter"] as? String == parameter)
        #expect(harness.upstream.calls.isEmpty)
    }

    @Test func aMissingQueryIsA400() throws {
        let harness = SearchHarness()
        let response = try #require(harness.getImmediately("/search"))
        #expect(response.status == 400)
        #expect(try response.jsonObject()["parameter"] as? String == "q")
    }

    private func parse(_ query: String) throws -> SearchQuery {
        try SearchQuery(try RequestTarget(parsing: "/search?" + query))
    }

    @Test func theDefaults() throws {
        let query = try parse("q=sunflowers")
        #expect(query.q == "sunflowers")
        #expect(query.filters == [SearchSample.hasImages])
        #expect(query.requiresImages)
        #expect(query.offset == 0)
        #expect(query.limit == SearchQuery.defaultLimit)
        #expect(query.limit == 20)
        #expect(query.sort == .relevance)
        #expect(query.fields == nil)
        #expect(query.wait == Double(SearchQuery.defaultWaitMilliseconds) / 1_000)
    }

    @Test(arguments: [
        ("q=a&limit=1", 1), ("q=a&limit=100", 100), ("q=a&offset=1000000&limit=20", 20),
    ])
    func limitsWithinTheBoundsAreAccepted(query: String, limit: Int) throws {
        #expect(try parse(query).limit == limit)
    }

    @Test(arguments: [("q=a&wait=0", 0.0), ("q=a&wait=250", 0.25), ("q=a&wait=30000", 30.0)])
    func waitIsInMilliseconds(query: String, seconds: Double) throws {
        #expect(try parse(query).wait == seconds)
    }

    @Test(arguments: SearchSort.allCases)
    func everySortIsAccepted(sort: SearchSort) throws {
        #expect(try parse("q=a&sort=\(sort.rawValue)").sort == sort)
    }

    @Test func filtersAreNormalisedAndSortedByName() throws {
        let query = try parse(
            "q=cat&medium=Paintings|Silk&isHighlight=false&dateEnd=100&departmentId=011&dateBegin=-100&hasImages=false")
        #expect(query.q == "cat")
        #expect(
            query.filters.map { "\($0.name)=\($0.value)" } == [
                "dateBegin=-100", "dateEnd=100", "departmentId=11", "hasImages=false", "isHighlight=false",
                "medium=Paintings|Silk",
            ])
        #expect(!query.requiresImages)
    }

    @Test func flagsInAnyCaseAreSentToTheMetInLowerCase() throws {
        let query = try parse("q=cat&isHighlight=True&hasImages=FALSE&store=True")
        #expect(query.filters.map { "\($0.name)=\($0.value)" } == ["hasImages=false", "isHighlight=true"])
        #expect(query.store)
        #expect(!query.requiresImages)
    }

    @Test func equalDatesAndBCERangesAreAccepted() throws {
        #expect(try parse("q=a&dateBegin=1889&dateEnd=1889").filters.count == 3)
        #expect(try parse("q=a&dateBegin=-3000&dateEnd=-2000").filters.contains { $0.value == "-3000" })
    }

    @Test(arguments: [SearchAPIMode.v1, .v1_1])
    func theUpstreamQueryIsCanonicalWithQLast(mode: SearchAPIMode) async {
        let harness = SearchHarness(mode: mode)
        _ = await harness.get("/search?q=sunflowers&medium=Paintings|Silk&isHighlight=true&departmentId=11")
        let expected =
            mode == .v1
            ? "/public/collection/v1/search?departmentId=11&hasImages=true&isHighlight=true&medium=Paintings|Silk"
                + "&q=sunflowers"
            : "/public/collection/v1.1/search?departmentId=11&hasImages=true&isHighlight=true&limit=500"
                + "&medium=Paintings|Silk&offset=0&q=sunflowers"
        #expect(harness.upstream.calls.first == expected)
    }

    @Test func equivalentRequestsShareOneUpstreamCall() async throws {
        let upstream = FakeUpstream()
        let filters: [RequestTarget.QueryItem] = [
            .init(name: "departmentId", value: "11"), SearchSample.hasImages,
            .init(name: "isHighlight", value: "true"),
        ]
        upstream.answer(SearchSample.page(0, "sunflowers", filters: filters), with: SearchSample.ids([436_524]))
        SearchSample.answerObjects([436_524], on: upstream)
        let harness = SearchHarness(upstream)

        let first = await harness.get("/search?q=sunflowers&isHighlight=true&departmentId=11")
        #expect(first.status == 200)
        let calls = upstream.calls
        #expect(calls.count == 2)
        for equivalent in [
            "/search?departmentId=11&isHighlight=true&q=sunflowers",
            "/search?hasImages=true&departmentId=011&q=sunflowers&isHighlight=true",
            "/search?isHighlight=true&q=sunflowers&departmentId=11&offset=0&limit=20&sort=relevance",
        ] {
            let response = try #require(harness.getImmediately(equivalent), "\(equivalent) needed the upstream")
            #expect(response.status == 200)
            #expect(response.headers["Cache-Status"]?.hasPrefix("TheMet; hit") == true)
        }
        #expect(upstream.calls == calls)
    }
}
