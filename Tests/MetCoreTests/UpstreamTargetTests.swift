import Testing

@testable import MetCore
@testable import MetEngine

@Suite("Upstream targets: one total encoder, and the cache key is what is sent")
struct UpstreamTargetTests {
    @Test(arguments: [
        ("q", "sunflowers", "/p?q=sunflowers"),
        ("q", "été", "/p?q=%C3%A9t%C3%A9"),
        ("q", "a b+c", "/p?q=a%20b%2Bc"),
        ("medium", "Paintings|Silk", "/p?medium=Paintings|Silk"),
        ("hasImages", "true&limit=500", "/p?hasImages=true%26limit%3D500"),
        ("q", "100%", "/p?q=100%25"),
        ("q", "\u{0}\r\n#?/", "/p?q=%00%0D%0A%23%3F%2F"),
        ("a=b", "", "/p?a%3Db="),
    ])
    func namesAndValuesAreEncodedByteByByte(name: String, value: String, expected: String) {
        #expect(UpstreamTarget.encode(path: "/p", query: [.init(name: name, value: value)]) == expected)
    }

    @Test func itemsKeepTheirOrderAndAPathWithoutQueryHasNoQuestionMark() {
        let items: [RequestTarget.QueryItem] = [.init(name: "b", value: "1"), .init(name: "a", value: "2")]
        #expect(UpstreamTarget.encode(path: "/x/y", query: items) == "/x/y?b=1&a=2")
        #expect(UpstreamTarget.encode(path: "/x/y", query: []) == "/x/y")
    }

    /// The one query joiner behind upstream targets and `/search` links keeps only the bytes it is
    /// told to, in names and values alike; the path always keeps its `/`.
    @Test func theJoinerKeepsOnlyTheBytesItIsTold() {
        let items: [RequestTarget.QueryItem] = [.init(name: "fields", value: "a,b"), .init(name: "x|y", value: "1|2")]
        #expect(
            PercentEncoding.target(path: "/s t/u", query: items, keeping: [.comma, .pipe])
                == "/s%20t/u?fields=a,b&x|y=1|2")
        #expect(PercentEncoding.target(path: "/s|t", query: items, keeping: .pipe) == "/s%7Ct?fields=a%2Cb&x|y=1|2")
        #expect(PercentEncoding.target(path: "/s,t", query: items, keeping: []) == "/s%2Ct?fields=a%2Cb&x%7Cy=1%7C2")
    }

    /// Every scalar up to U+07FF, and a few far beyond, in names and values: visible ASCII out,
    /// and parsing the target back gives the same items.
    @Test func anyTextEncodesToVisibleASCIIThatDecodesBackToIt() throws {
        var scalars = (0..<0x800).compactMap(Unicode.Scalar.init)
        scalars += ["\u{FFFD}", "\u{1F33B}", "\u{10FFFF}", "\u{E000}"]
        for chunk in stride(from: 0, to: scalars.count, by: 16) {
            let text = String(String.UnicodeScalarView(scalars[chunk..<min(chunk + 16, scalars.count)]))
            let items: [RequestTarget.QueryItem] = [.init(name: text, value: text), .init(name: "q", value: text)]
            let target = UpstreamTarget.encode(path: "/p", query: items)
            #expect(target.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7F })
            #expect(try RequestTarget(parsing: target).query == items)
        }
    }

    @Test func theCacheKeyIsTheTargetSentUpstream() {
        let resource = MetResource.search(.v1_1, filters: [.init(name: "medium", value: "Oil & canvas")], q: "é")
        #expect(resource.cacheKey == UpstreamTarget.encode(path: resource.path, query: resource.query))
        #expect(resource.cacheKey == "/public/collection/v1.1/search?medium=Oil%20%26%20canvas&q=%C3%A9")
    }

    /// An object's key is written without the encoder; it must be the very bytes the encoder writes.
    @Test(arguments: [0, 1, 9, 10, 436_535, 999_999_999, Int.max, -1, Int.min])
    func anObjectsKeyIsTheEncodedTarget(id: Int) {
        let resource = MetResource.object(id: id)
        #expect(resource.cacheKey == UpstreamTarget.encode(path: resource.path, query: resource.query))
    }

    /// Pairs of requests whose decoded values joined with `&` and `=` once read the same: each
    /// pair must plan two different upstream targets.
    @Test(arguments: [
        (
            "/public/collection/v1.1/search?hasImages=true%26limit%3D500%26offset%3D0%26q%3Dcypress",
            "/public/collection/v1.1/search?hasImages=true&limit=500&offset=0&q=cypress"
        ),
        (
            "/public/collection/v1/search?dateBegin=1800%26dateEnd%3D1900&q=sunflower",
            "/public/collection/v1/search?dateBegin=1800&dateEnd=1900&q=sunflower"
        ),
        (
            "/public/collection/v1/search?isHighlight=true%26q%3Dx&q=y",
            "/public/collection/v1/search?isHighlight=true&q=x&q=y"
        ),
    ])
    func mirrorSearchesThatOnceCollidedHaveTwoKeys(crafted: String, ordinary: String) async throws {
        let first = try #require(await Harness.plannedKey(for: crafted))
        let second = try #require(await Harness.plannedKey(for: ordinary))
        #expect(first != second)
    }

    /// `/search`'s term filters take any text: a value holding `&name=value` is one value.
    @Test(arguments: [
        ("medium", "Paintings&limit=500", "Paintings"),
        ("geoLocation", "France&hasImages=false", "France"),
    ])
    func aTermFilterHoldingAQueryIsItsOwnUpstreamCall(name: String, crafted: String, ordinary: String) async throws {
        let upstream = FakeUpstream()
        SearchSample.answerObjects([1, 2, 3], on: upstream)
        let craftedPage = SearchSample.page(0, filters: [SearchSample.hasImages, .init(name: name, value: crafted)])
        let ordinaryPage = SearchSample.page(0, filters: [SearchSample.hasImages, .init(name: name, value: ordinary)])
        upstream.answer(craftedPage, with: SearchSample.ids([1, 2, 3]))
        upstream.answer(ordinaryPage, with: SearchSample.ids([1]))
        let harness = SearchHarness(upstream, mode: .v1_1)
        let encoded = PercentEncoding.encode(crafted)

        #expect(try await harness.get("/search?q=cypress&\(name)=\(encoded)").searchPage().total == 3)
        #expect(try await harness.get("/search?q=cypress&\(name)=\(ordinary)").searchPage().total == 1)
        #expect(craftedPage.cacheKey != ordinaryPage.cacheKey)
        #expect(upstream.callCount(for: craftedPage) == 1)
        #expect(upstream.callCount(for: ordinaryPage) == 1)
    }

    /// The poisoning pair of the mirror, end to end: the crafted request first, then the ordinary
    /// `/search?q=cypress`: two upstream calls, and the ordinary one gets its own answer.
    @Test func aCraftedMirrorSearchDoesNotAnswerAnOrdinarySearch() async throws {
        let upstream = FakeUpstream()
        SearchSample.answerObjects(1...25, on: upstream)
        let crafted = MetResource.search(
            .v1_1, filters: [.init(name: "hasImages", value: "true&limit=500&offset=0&q=cypress")], q: nil)
        upstream.answer(crafted, with: SearchSample.ids(Array(1...25)))
        upstream.answer(SearchSample.page(0), with: SearchSample.ids([1, 2]))
        let harness = SearchHarness(upstream, mode: .v1_1)

        let poisoned = await harness.get(
            "/public/collection/v1.1/search?hasImages=true%26limit%3D500%26offset%3D0%26q%3Dcypress")
        #expect(poisoned.status == 200)
        let page = try await harness.get("/search?q=cypress").searchPage()
        #expect(page.total == 2)
        #expect(upstream.callCount(for: crafted) == 1)
        #expect(upstream.callCount(for: SearchSample.page(0)) == 1)
    }
}
