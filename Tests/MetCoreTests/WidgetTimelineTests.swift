import Foundation
import Testing

@testable import MetCore
@testable import MetEngine

// MARK: - Support shared by the widget, deep-link and shared-store suites

/// Object records for the widget timeline, the deep links and the shared store.
enum WidgetSample {
    /// The timeline start most tests ask for, and the same instant in seconds since 1970.
    static let start = "2026-11-29T18:00:00Z"
    static let startSeconds = 1_795_975_200.0

    /// An object record with every member the widget and deep links read. `nil` leaves a member
    /// out; strings are escaped by `JSONSerialization`, so hostile values (CR/LF) stay valid JSON.
    static func record(
        _ id: Int, title: String = "Cypresses", artist: String? = "Vincent van Gogh", isPublicDomain: Bool? = true,
        image: String? = "https://images.metmuseum.org/CRDImages/ep/web-large/DP130999.jpg",
        objectURL: String? = "https://www.metmuseum.org/art/collection/search/",
        objectDate: String? = "1889", medium: String? = "Oil on canvas", creditLine: String? = "Rogers Fund, 1949"
    ) -> String {
        var members: [String: Any] = ["objectID": id, "title": title]
        members["artistDisplayName"] = artist
        members["isPublicDomain"] = isPublicDomain
        members["primaryImage"] = image
        members["primaryImageSmall"] = image
        // The default is the Met's own page for the object.
        members["objectURL"] = objectURL.map { $0.hasSuffix("/search/") ? $0 + String(id) : $0 }
        members["objectDate"] = objectDate
        members["medium"] = medium
        members["creditLine"] = creditLine
        let data = try? JSONSerialization.data(
            withJSONObject: members, options: [.sortedKeys, .withoutEscapingSlashes])
        return String(decoding: data ?? Data(), as: UTF8.self)
    }

    /// A cache entry holding `record` for object `id`, as a search leaves it for the store.
    static func entry(_ id: Int, _ record: String) -> CacheEntry {
        let body = Array(record.utf8)
        return CacheEntry(
            key: MetResource.object(id: id).cacheKey, kind: .object, status: 200, body: body, storedAt: 0,
            policy: FreshnessPolicy(), details: EntryDetails.read(body, kind: .object))
    }

    /// Makes objects `ids` (default records) the store's latest results, and waits for the file.
    static func fill(_ store: SharedStore, with ids: [Int]) {
        store.replace(with: ids.map { entry($0, record($0, title: "Object \($0)")) })
        store.waitForWrites()
    }

    /// `seconds` since 1970 as ISO 8601 UTC with whole seconds, computed apart from the code under test.
    static func iso(_ seconds: Double) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        return formatter.string(from: Date(timeIntervalSince1970: seconds))
    }
}

/// A `/widget/timeline` body, decoded for assertions.
struct TimelineDocument {
    var family: String?
    var source: String?
    var start: String?
    var interval: Int?
    var entries: [[String: Any]]
    var placeholder: [String: Any]?
    var reload: [String: Any]

    /// The entries' object IDs, in order.
    var ids: [Int] { entries.compactMap { $0["objectID"] as? Int } }
    /// The entries' dates, in order.
    var dates: [String] { entries.compactMap { $0["date"] as? String } }
}

extension Response {
    /// The body as a widget timeline (fails the test when it is not one).
    func timeline(sourceLocation: SourceLocation = #_sourceLocation) throws -> TimelineDocument {
        #expect(status == 200, "status \(status): \(text)", sourceLocation: sourceLocation)
        let document = try jsonObject(sourceLocation: sourceLocation)
        return TimelineDocument(
            family: document["family"] as? String, source: document["source"] as? String,
            start: document["start"] as? String, interval: document["interval"] as? Int,
            entries: try #require(document["entries"] as? [[String: Any]], sourceLocation: sourceLocation),
            placeholder: document["placeholder"] as? [String: Any],
            reload: try #require(document["reload"] as? [String: Any], sourceLocation: sourceLocation))
    }
}

// MARK: - The timeline

@Suite("GET /widget/timeline")
struct WidgetTimelineTests {
    @Test(arguments: [
        (nil, ["2026-11-29T18:00:00Z", "2026-11-29T19:00:00Z", "2026-11-29T20:00:00Z"], "2026-11-29T21:00:00Z"),
        ("60", ["2026-11-29T18:00:00Z", "2026-11-29T18:01:00Z", "2026-11-29T18:02:00Z"], "2026-11-29T18:03:00Z"),
        ("90", ["2026-11-29T18:00:00Z", "2026-11-29T18:01:30Z", "2026-11-29T18:03:00Z"], "2026-11-29T18:04:30Z"),
        ("86400", ["2026-11-29T18:00:00Z", "2026-11-30T18:00:00Z", "2026-12-01T18:00:00Z"], "2026-12-02T18:00:00Z"),
    ])
    func entriesAreIntervalApartFromStartInStoreOrder(interval: String?, dates: [String], reload: String) throws {
        let harness = SearchHarness()
        WidgetSample.fill(harness.service.store, with: [30, 10, 20])
        let target = "/widget/timeline?start=\(WidgetSample.start)" + (interval.map { "&interval=\($0)" } ?? "")
        let response = try #require(harness.getImmediately(target), "the store's timeline is answered at once")
        let timeline = try response.timeline()
        #expect(timeline.ids == [30, 10, 20])
        #expect(timeline.dates == dates)
        #expect(timeline.reload["policy"] as? String == "atEnd")
        #expect(timeline.reload["date"] as? String == reload)
        #expect(timeline.start == WidgetSample.start)
        #expect(timeline.interval == Int(interval ?? "3600"))
        #expect(timeline.family == "medium")
        #expect(timeline.source == "store")
        #expect(timeline.placeholder == nil)
        #expect(try response.jsonObject()["placeholder"] is NSNull)
        #expect(response.headers["Content-Type"] == "application/json; charset=utf-8")
        #expect(harness.upstream.calls.isEmpty)
    }

    @Test(arguments: [
        ("2026-11-29T18:00:00Z", "2026-11-29T18:00:00Z"),
        ("2026-11-29T19:30:00+01:30", "2026-11-29T18:00:00Z"),
        ("2026-11-29T13:00:00-05:00", "2026-11-29T18:00:00Z"),
        // Fractions of a second are dropped from the dates shown.
        ("2026-11-29T18:00:00.750Z", "2026-11-29T18:00:00Z"),
    ])
    func startMayHaveAnyZoneAndIsShownInUTC(start: String, first: String) async throws {
        let harness = SearchHarness()
        WidgetSample.fill(harness.service.store, with: [1, 2])
        let encoded = start.replacingOccurrences(of: "+", with: "%2B")
        let timeline = try await harness.get("/widget/timeline?start=\(encoded)").timeline()
        #expect(timeline.dates.first == first)
        #expect(timeline.dates.last == "2026-11-29T19:00:00Z")
    }

    @Test func theMediumFamilyHasTheEssentialsAndLinks() async throws {
        let harness = SearchHarness()
        WidgetSample.fill(harness.service.store, with: [436_535])
        let timeline = try await harness.get("/widget/timeline?start=\(WidgetSample.start)").timeline()
        let entry = try #require(timeline.entries.first)
        #expect(
            Set(entry.keys)
                == ["date", "objectID", "title", "artist", "imageURL", "isPublicDomain", "widgetURL", "openURL"])
        #expect(entry["title"] as? String == "Object 436535")
        #expect(entry["artist"] as? String == "Vincent van Gogh")
        // This server's copy of the Met's picture: the widget never hot-links the image host.
        #expect(entry["imageURL"] as? String == "/images/CRDImages/ep/web-large/DP130999.jpg")
        #expect(entry["isPublicDomain"] as? Bool == true)
        #expect(entry["widgetURL"] as? String == "themet://436535")
        #expect(entry["openURL"] as? String == "/open/436535")
    }

    @Test(arguments: ["family=medium", ""])
    func mediumIsTheDefaultFamily(query: String) async throws {
        let harness = SearchHarness()
        WidgetSample.fill(harness.service.store, with: [1])
        let timeline = try await harness.get("/widget/timeline?\(query)").timeline()
        #expect(timeline.family == "medium")
        #expect(timeline.entries.first?["medium"] == nil)
    }

    @Test func theLargeFamilyAddsDateMediumAndCreditLine() async throws {
        let harness = SearchHarness()
        WidgetSample.fill(harness.service.store, with: [436_535])
        let timeline = try await harness.get("/widget/timeline?family=large&start=\(WidgetSample.start)").timeline()
        #expect(timeline.family == "large")
        let entry = try #require(timeline.entries.first)
        #expect(
            Set(entry.keys)
                == [
                    "date", "objectID", "title", "artist", "imageURL", "isPublicDomain", "widgetURL", "openURL",
                    "objectDate", "medium", "creditLine",
                ])
        #expect(entry["objectDate"] as? String == "1889")
        #expect(entry["medium"] as? String == "Oil on canvas")
        #expect(entry["creditLine"] as? String == "Rogers Fund, 1949")
    }

    @Test func missingOrEmptyTextIsNullAndTheSmallImageComesFirst() async throws {
        let harness = SearchHarness()
        let big = "https://images.metmuseum.org/CRDImages/ep/original/DT1567.jpg"
        let bare =
            #"{"objectID":5,"primaryImage":"\#(big)","primaryImageSmall":"","#
            + #""artistDisplayName":"","objectDate":""}"#
        let both = WidgetSample.record(6, image: big)
            .replacingOccurrences(
                of: #""primaryImageSmall":"\#(big)""#,
                with: #""primaryImageSmall":"https://images.metmuseum.org/CRDImages/ep/web-large/DT1567.jpg""#)
        let none = WidgetSample.record(7, isPublicDomain: false, image: "")
        // A picture this server cannot fetch (another host, a shape the image host does not have) is none.
        let elsewhere = WidgetSample.record(8, image: "https://images.example/big.jpg")
        let odd = WidgetSample.record(9, image: "https://images.metmuseum.org/CRDImages/ep/web-large/../x.jpg")
        harness.service.store.replace(with: [
            WidgetSample.entry(5, bare), WidgetSample.entry(6, both), WidgetSample.entry(7, none),
            WidgetSample.entry(8, elsewhere), WidgetSample.entry(9, odd),
        ])
        let timeline = try await harness.get("/widget/timeline?family=large").timeline()
        #expect(timeline.ids == [5, 6, 7, 8, 9])
        let (first, second, third) = (timeline.entries[0], timeline.entries[1], timeline.entries[2])
        #expect(timeline.entries[3]["imageURL"] is NSNull)
        #expect(timeline.entries[4]["imageURL"] is NSNull)
        #expect(first["imageURL"] as? String == "/images/CRDImages/ep/original/DT1567.jpg")
        #expect(first["title"] as? String == "")
        for name in ["artist", "objectDate", "medium", "creditLine"] { #expect(first[name] is NSNull, "\(name)") }
        #expect(first["isPublicDomain"] as? Bool == false)
        #expect(second["imageURL"] as? String == "/images/CRDImages/ep/web-large/DT1567.jpg")
        #expect(third["imageURL"] is NSNull)
        #expect(third["isPublicDomain"] as? Bool == false)
    }

    @Test(arguments: ["medium", "large"])
    func anEmptyStoreGivesNoEntriesAndAPlaceholder(family: String) async throws {
        let harness = SearchHarness()
        let response = await harness.get("/widget/timeline?family=\(family)&start=\(WidgetSample.start)")
        let timeline = try response.timeline()
        #expect(timeline.entries.isEmpty)
        let placeholder = try #require(timeline.placeholder)
        #expect(placeholder["date"] as? String == WidgetSample.start)
        #expect(placeholder["title"] as? String == "The Met")
        #expect((placeholder["subtitle"] as? String)?.isEmpty == false)
        #expect(placeholder["imageURL"] is NSNull)
        #expect(timeline.reload["policy"] as? String == "atEnd")
        #expect(timeline.reload["date"] as? String == "2026-11-29T19:00:00Z")
        #expect(timeline.family == family)
        #expect(harness.upstream.calls.isEmpty)
    }

    @Test func theSameInputsGiveTheSameBytesAndA304() async throws {
        let harness = SearchHarness()
        WidgetSample.fill(harness.service.store, with: [1, 2, 3])
        let target = "/widget/timeline?family=large&start=\(WidgetSample.start)"
        let first = await harness.get(target)
        let second = try #require(harness.getImmediately(target))
        #expect(first.status == 200)
        #expect(first.body == second.body)
        let etag = try #require(first.headers["ETag"])
        #expect(second.headers["ETag"] == etag)
        #expect(first.headers["Cache-Control"] == "no-cache")

        let unchanged = await harness.get(target, headers: ["If-None-Match": etag])
        #expect(unchanged.status == 304)
        #expect(unchanged.body.isEmpty)
        #expect(unchanged.headers["ETag"] == etag)

        // Other inputs, other bytes.
        let otherStart = await harness.get("/widget/timeline?family=large&start=2026-11-29T19:00:00Z")
        #expect(otherStart.headers["ETag"] != etag)
        #expect(await harness.get("/widget/timeline?start=\(WidgetSample.start)").headers["ETag"] != etag)

        // New latest results: the old ETag no longer matches.
        WidgetSample.fill(harness.service.store, with: [3, 2, 1])
        let changed = await harness.get(target, headers: ["If-None-Match": etag])
        #expect(changed.status == 200)
        #expect(try changed.timeline().ids == [3, 2, 1])
    }

    @Test(arguments: [3_600, 60, 86_400])
    func withoutStartItBeginsAtTheCurrentWholeIntervalAndStaysTheSameUntilTheNext(interval: Int) async throws {
        let harness = SearchHarness()
        WidgetSample.fill(harness.service.store, with: [1, 2])
        let target = "/widget/timeline?interval=\(interval)"
        let now = harness.time.now()
        let start = (now / Double(interval)).rounded(.down) * Double(interval)
        let first = await harness.get(target)
        let timeline = try first.timeline()
        #expect(timeline.start == WidgetSample.iso(start))
        #expect(timeline.dates == [WidgetSample.iso(start), WidgetSample.iso(start + Double(interval))])
        let etag = try #require(first.headers["ETag"])

        // Just before the next whole interval: the same bytes (a 304 for the widget).
        harness.time.advance(to: start + Double(interval) - 1)
        #expect(await harness.get(target).body == first.body)
        #expect(await harness.get(target, headers: ["If-None-Match": etag]).status == 304)

        // From the next whole interval on, the timeline moves.
        harness.time.advance(to: start + Double(interval))
        let moved = await harness.get(target, headers: ["If-None-Match": etag])
        #expect(moved.status == 200)
        #expect(try moved.timeline().start == WidgetSample.iso(start + Double(interval)))
    }

    @Test(arguments: [
        (nil, ""),
        ("https://met.example", "https://met.example"),
        ("https://met.example/", "https://met.example"),
        ("http://127.0.0.1:8080/themet/", "http://127.0.0.1:8080/themet"),
    ])
    func linksAreRelativeUnlessAPublicURLIsConfigured(publicURL: String?, served: String) async throws {
        let base = try publicURL.map {
            try ServerConfiguration.parse(arguments: ["--public-url", $0], environment: [:], processorCount: 1)
                .presentation.publicURL
        }
        let harness = SearchHarness { $0.presentation.publicURL = base ?? nil }
        WidgetSample.fill(harness.service.store, with: [7])
        let entry = try #require(try await harness.get("/widget/timeline").timeline().entries.first)
        #expect(entry["openURL"] as? String == served + "/open/7")
        #expect(entry["imageURL"] as? String == served + "/images/CRDImages/ep/web-large/DP130999.jpg")
        #expect(entry["widgetURL"] as? String == "themet://7")
    }

    @Test(arguments: [
        ("family=small", "family"), ("family=LARGE", "family"), ("family=", "family"),
        ("start=tomorrow", "start"), ("start=2026-11-29", "start"), ("start=2026-11-29T18:00:00", "start"),
        ("start=2026-13-01T00:00:00Z", "start"), ("start=1795975200", "start"), ("start=", "start"),
        ("start=2026-02-30T18:00:00Z", "start"), ("start=2026-11-29T24:00:00Z", "start"),
        ("start=2026-11-29T18:00:00%2B99:99", "start"), ("start=2026-1-29T18:00:00Z", "start"),
        ("start=12026-11-29T18:00:00Z", "start"), ("start=9999-12-31T23:59:59Z", "start"),
        ("start=0000-01-01T00:00:00Z", "start"), ("family=large&family=medium", "family"),
        ("interval=59", "interval"), ("interval=86401", "interval"), ("interval=0", "interval"),
        ("interval=-3600", "interval"), ("interval=3600.0", "interval"), ("interval=1e3", "interval"),
        ("interval=%EF%BC%96%EF%BC%90", "interval"), ("interval=hour", "interval"), ("interval=", "interval"),
        ("interval=99999999999999999999", "interval"),
    ])
    func aBadFamilyStartOrIntervalIs400NamingIt(query: String, parameter: String) async throws {
        let harness = SearchHarness()
        let response = await harness.get("/widget/timeline?\(query)")
        #expect(response.status == 400)
        #expect(response.problemCode == "invalid_parameter")
        #expect(try response.jsonObject()["parameter"] as? String == parameter)
        // With q too, the timeline's own parameters are checked first, without asking the Met.
        let withQuery = await harness.get("/widget/timeline?q=cypress&\(query)")
        #expect(withQuery.status == 400)
        #expect(try withQuery.jsonObject()["parameter"] as? String == parameter)
        #expect(harness.upstream.calls.isEmpty)
    }

    @Test(arguments: [
        ("colour=red", "colour"), ("limit=5", "limit"), ("sort=id", "sort"), ("hasImages=false", "hasImages"),
        ("family=large&wait=100", "wait"),
    ])
    func aParameterWithoutQIs400UnknownParameter(query: String, parameter: String) async throws {
        let harness = SearchHarness()
        let response = await harness.get("/widget/timeline?\(query)")
        #expect(response.status == 400)
        #expect(response.problemCode == "unknown_parameter")
        #expect(try response.jsonObject()["parameter"] as? String == parameter)
        #expect(harness.upstream.calls.isEmpty)
    }

    @Test(arguments: [("q=cypress&colour=red", "colour"), ("q=cypress&limit=1000", "limit")])
    func withQTheSearchParametersAreCheckedAsSearchDoes(query: String, parameter: String) async throws {
        let harness = SearchHarness()
        let response = await harness.get("/widget/timeline?\(query)")
        #expect(response.status == 400)
        #expect(try response.jsonObject()["parameter"] as? String == parameter)
        #expect(harness.upstream.calls.isEmpty)
    }

    @Test func withQItIsBuiltFromAHydratedSearch() async throws {
        let upstream = FakeUpstream()
        upstream.answer(SearchSample.v1(), with: SearchSample.ids([30, 10, 20, 40]))
        for id in [30, 10, 20] { upstream.answer(.object(id: id), with: .json(WidgetSample.record(id))) }
        // No image: left out, as /search leaves it out.
        upstream.answer(.object(id: 40), with: .json(WidgetSample.record(40, image: "")))
        let harness = SearchHarness(upstream, mode: .v1)
        WidgetSample.fill(harness.service.store, with: [1, 2])

        let target = "/widget/timeline?q=cypress&family=large&start=\(WidgetSample.start)"
        let response = await harness.get(target)
        let timeline = try response.timeline()
        #expect(timeline.source == "search")
        #expect(timeline.ids == [30, 10, 20])
        #expect(timeline.dates == ["2026-11-29T18:00:00Z", "2026-11-29T19:00:00Z", "2026-11-29T20:00:00Z"])
        #expect(timeline.entries.first?["creditLine"] as? String == "Rogers Fund, 1949")
        #expect(upstream.calls.count == 5)  // the list and four objects
        // Like /search, it becomes the latest results.
        #expect(harness.service.store.ids == [30, 10, 20])

        // Again: from the cache, on the loop, the same bytes, no upstream call.
        let again = try #require(harness.getImmediately(target))
        #expect(again.body == response.body)
        #expect(upstream.calls.count == 5)

        // The search parameters apply.
        let limited = try await harness.get("/widget/timeline?q=cypress&limit=2").timeline()
        #expect(limited.ids == [30, 10])
        #expect(upstream.calls.count == 5)
    }

    @Test func withQAFailedSearchIsItsProblem() async throws {
        let upstream = FakeUpstream()
        upstream.answer(SearchSample.v1(), with: .failure(.unreachable("connection refused")))
        let response = await SearchHarness(upstream, mode: .v1).get("/widget/timeline?q=cypress")
        #expect(response.status == 502)
        #expect(response.problemCode == "upstream_unreachable")
    }
}
