import Testing

@testable import MetCore
@testable import MetEngine

@Suite("Deep links: themet://<id>")
struct DeepLinkTests {
    @Test(arguments: [
        ("themet://1", 1), ("themet://436535", 436_535), ("themet://2147483647", 2_147_483_647),
        // The scheme is case-insensitive (RFC 3986 §3.1); the ID is all that is kept.
        ("THEMET://1", 1), ("TheMet://42", 42),
    ])
    func aWellFormedLinkGivesItsID(url: String, id: Int) throws {
        #expect(try DeepLink.objectID(in: url) == id)
        #expect(DeepLink.url(for: id) == "themet://\(id)")
    }

    static let hostileLinks = [
        "", "themet://", "themet:", "themet:1", "themet:/1", "themet///1", "themet//1", "themetx://1", "xthemet://1",
        "https://1", "http://www.metmuseum.org/art/collection/search/1", "javascript:alert(1)", "javascript://1",
        "JavaScript:alert(document.cookie)//themet://1", "data:text/html,themet://1", "themet://1/../x",
        "themet://1/", "themet://1/x", "themet://../1", "themet://%31", "themet://%2F1", "themet://01", "themet://0",
        "themet://00", "themet://-1", "themet://+1", "themet://2147483648", "themet://9999999999",
        "themet://99999999999999999999", "themet://1?x", "themet://1?", "themet://1#x", "themet://1#", "themet://1 ",
        " themet://1", "themet:// 1", "themet://1 2", "themet://1\r\nSet-Cookie: a=b", "themet://1\r\n",
        "themet://1\n", "themet://1\0", "themet://1\t", "themet://1.0", "themet://1e3", "themet://0x1",
        "themet://user@1", "themet://1@evil.example", "themet://1:80", "themet://evil.example", "themet://１",
        "themet://١", "themet://1\u{301}", "themet://[1]",
    ]

    @Test(arguments: hostileLinks)
    func anythingElseIsInvalidParameterURL(url: String) {
        let error = #expect(throws: Problem.self) { try DeepLink.objectID(in: url) }
        #expect(error?.code == "invalid_parameter")
        #expect(error?.parameter == "url")
    }

    @Test(arguments: hostileLinks)
    func theRouteRefusesItWith400AndNoLocation(url: String) async throws {
        let harness = Harness()
        let encoded = PercentEncoding.encode(url)
        for target in ["/open?url=\(encoded)", "/open?url=\(encoded)&format=json"] {
            let response = await harness.get(target)
            #expect(response.status == 400, "\(target)")
            #expect(response.problemCode == "invalid_parameter")
            #expect(try response.jsonObject()["parameter"] as? String == "url")
            #expect(response.headers["Location"] == nil)
        }
        #expect(harness.upstream.calls.isEmpty)
    }

    @Test func theQueryIsDecodedOnceSoAnEscapedLinkIsTheLinkItself() async throws {
        let upstream = FakeUpstream([Sample.objectKey(1): .json(WidgetSample.record(1))])
        let harness = Harness(upstream: upstream)
        // `%31` in the query is transport encoding for `1`; `%2531` is a literal `%31`, refused.
        #expect(await harness.get("/open?url=themet://%31").headers["Location"] == "/objects/1")
        #expect(await harness.get("/open?url=themet%3A%2F%2F1").headers["Location"] == "/objects/1")
        #expect(await harness.get("/open?url=themet://%2531").status == 400)
    }
}

@Suite("Where a deep link leads")
struct DeepLinkTargetTests {
    /// One row of the target table.
    struct TargetCase: Sendable, CustomTestStringConvertible {
        var isPublicDomain: Bool
        var objectURL: String?
        var template = "/objects/{id}"
        var kind: String
        var location: String

        var testDescription: String { "\(isPublicDomain ? "public" : "not public"), \(objectURL.debugDescription)" }

        static func detail(_ location: String, template: String = "/objects/{id}", objectURL: String? = nil) -> Self {
            TargetCase(
                isPublicDomain: true, objectURL: objectURL, template: template, kind: "detail", location: location)
        }

        static func web(_ objectURL: String?, _ location: String = canonical) -> Self {
            TargetCase(isPublicDomain: false, objectURL: objectURL, kind: "web", location: location)
        }
    }

    static let canonical = "https://www.metmuseum.org/art/collection/search/7"

    static let cases: [TargetCase] = [
        .detail("/objects/7"),
        .detail("/objects/7", objectURL: "https://evil.example/"),
        .detail("https://app.example/objects/7", template: "https://app.example/objects/{id}"),
        .detail("/art/7/view?from=widget", template: "/art/{id}/view?from=widget"),
        .web("https://www.metmuseum.org/art/collection/search/7", "https://www.metmuseum.org/art/collection/search/7"),
        .web("http://www.metmuseum.org/art/collection/search/7", "http://www.metmuseum.org/art/collection/search/7"),
        .web("https://metmuseum.org/art/7", "https://metmuseum.org/art/7"),
        // Parsed and written out again: scheme and host in lower case, the port without leading
        // zeros, an empty path as `/`; the path, query and fragment as they were.
        .web("HTTPS://WWW.METMUSEUM.ORG/art/7", "https://www.metmuseum.org/art/7"),
        .web("https://www.metmuseum.org", "https://www.metmuseum.org/"),
        .web("https://www.metmuseum.org?x=1", "https://www.metmuseum.org/?x=1"),
        .web("https://www.metmuseum.org:0443/art/7", "https://www.metmuseum.org:443/art/7"),
        .web("https://collections.www.metmuseum.org:65535/a%20b", "https://collections.www.metmuseum.org:65535/a%20b"),
        .web("https://www.metmuseum.org:443/art/7?ref=x#top", "https://www.metmuseum.org:443/art/7?ref=x#top"),
        .web(nil), .web(""), .web("https://evil.example/art/collection/search/7"),
        .web("https://metmuseum.org.evil.example/"), .web("https://xmetmuseum.org/"),
        .web("https://evil.example/?next=https://www.metmuseum.org/"), .web("https://evil.example#.metmuseum.org"),
        .web("https://www.metmuseum.org@evil.example/"), .web("https://user@www.metmuseum.org/"),
        .web("https://www.metmuseum.org\\@evil.example/"), .web("https://www.metmuseum.org/art\r\nSet-Cookie: a=b"),
        .web("https://www.metmuseum.org/art\nLocation: https://evil.example"), .web("https://www.metmuseum.org/a b"),
        .web(" https://www.metmuseum.org/"), .web("https://www.metmuseum.org/\"><script>"),
        .web("https://www.metmuseum.org/art/ä"), .web("https://www.metmuseum.org/{id}"),
        .web("javascript:alert(1)//www.metmuseum.org"), .web("ftp://www.metmuseum.org/"),
        .web("//www.metmuseum.org/art/7"), .web("/art/collection/search/7"), .web("www.metmuseum.org/art/7"),
        .web("https:///www.metmuseum.org"), .web("https://metmuseum.org:evil.example/"),
        // Hostile hosts: escapes, userinfo, backslashes, look-alikes, IDN, trailing dots, literals.
        .web("https://evil.com%2f.metmuseum.org/"), .web("https://evil.com%2F.metmuseum.org/"),
        .web("https://evil%2ecom.metmuseum.org/"), .web("https://www.metmuseum%2eorg/"),
        .web("https://evil.com%00.metmuseum.org/"), .web("https://evil.com%2f@www.metmuseum.org/"),
        .web("https://www.metmuseum.org:443@evil.example/"), .web("https://a:b@www.metmuseum.org/"),
        .web("https://evil.com\\.metmuseum.org/"), .web("https:\\\\www.metmuseum.org/"),
        .web("https://metmuseum.org.evil.com/"), .web("https://evilmetmuseum.org/"), .web("https://metmuseum.org./"),
        .web("https://www..metmuseum.org/"), .web("https://.metmuseum.org/"), .web("https://-x.metmuseum.org/"),
        .web("https://x-.metmuseum.org/"), .web("https://ex_ample.metmuseum.org/"),
        .web("https://www.metmuséum.org/"), .web("https://www.ｍetmuseum.org/"), .web("https://évil.metmuseum.org/"),
        .web("https://www.metmuseum.org\u{3002}evil.example/"), .web("https://[::1].metmuseum.org/"),
        .web("https://[::1]/"), .web("https://127.0.0.1/.metmuseum.org"),
        // Ports out of range or not numbers.
        .web("https://www.metmuseum.org:0/"), .web("https://www.metmuseum.org:99999/"),
        .web("https://www.metmuseum.org:65536/"), .web("https://www.metmuseum.org:/"),
        .web("https://www.metmuseum.org:-1/"), .web("https://www.metmuseum.org:+80/"),
        .web("https://www.metmuseum.org:8O/"), .web("https://www.metmuseum.org:000000443/"),
        .web("https://www.metmuseum.org:443:443/"), .web("https://www.metmuseum.org: 443/"),
        // Controls, spaces and broken escapes anywhere.
        .web("https://www.metmuseum.org/\u{0}"), .web("https://www.metmuseum.org/\u{7F}"),
        .web("https://www.metmuseum.org\t/"), .web("https://www.metmuseum .org/"), .web("https://www.metmuseum.org/%"),
        .web("https://www.metmuseum.org/%2"), .web("https://www.metmuseum.org/%zz"),
        .web("https://www.metmuseum.org/art\u{2028}x"), .web(String(repeating: "a", count: 3_000)),
        .web("https://www.metmuseum.org/" + String(repeating: "a", count: 2_100)),
        // 2,048 bytes with a bare fragment: the `/` written before it would make 2,049 (found by
        // fuzzing: the re-serialized URL was then refused when read again).
        .web("https://www.metmuseum.org#" + String(repeating: "a", count: 2_048 - 26)),
    ]

    @Test(arguments: cases)
    func theTargetFollowsPublicDomainAndAcceptsOnlyTheMetsPages(row: TargetCase) {
        let target = DeepLink.target(
            id: 7, isPublicDomain: row.isPublicDomain, objectURL: row.objectURL, detailTemplate: row.template)
        #expect(target.kind == row.kind)
        #expect(target.location == row.location)
    }

    @Test(arguments: cases)
    func theRouteRedirectsThereOrSaysSoInJSON(row: TargetCase) async throws {
        let upstream = FakeUpstream([
            Sample.objectKey(7): .json(
                WidgetSample.record(7, isPublicDomain: row.isPublicDomain, objectURL: row.objectURL))
        ])
        let harness = Harness(upstream: upstream) { $0.presentation.detailURL = row.template }
        for target in ["/open/7", "/open?url=themet://7"] {
            let response = await harness.get(target)
            #expect(response.status == 302)
            #expect(response.headers["Location"] == row.location)
            #expect(response.headers["Cache-Control"] == "no-cache")
            #expect(response.body.isEmpty)
        }
        for target in ["/open/7?format=json", "/open?format=json&url=themet://7"] {
            let response = await harness.get(target)
            #expect(response.status == 200)
            #expect(response.headers["Content-Type"] == "application/json; charset=utf-8")
            #expect(response.headers["Location"] == nil)
            let json = try response.jsonObject()
            #expect(Set(json.keys) == ["objectID", "isPublicDomain", "target", "location"])
            #expect(json["objectID"] as? Int == 7)
            #expect(json["isPublicDomain"] as? Bool == row.isPublicDomain)
            #expect(json["target"] as? String == row.kind)
            #expect(json["location"] as? String == row.location)
        }
        // One upstream call; the rest come from the cache, on the loop.
        #expect(upstream.calls == [Sample.objectKey(7)])
        #expect(harness.getImmediately("/open/7")?.headers["Location"] == row.location)
    }

    @Test func aRecordWithoutIsPublicDomainIsNotPublicDomain() async {
        let upstream = FakeUpstream([Sample.objectKey(7): .json(WidgetSample.record(7, isPublicDomain: nil))])
        let response = await Harness(upstream: upstream).get("/open/7")
        #expect(response.headers["Location"] == "https://www.metmuseum.org/art/collection/search/7")
    }

    @Test func headRedirectsLikeGet() async {
        let upstream = FakeUpstream([Sample.objectKey(7): .json(WidgetSample.record(7))])
        let response = await Harness(upstream: upstream).service.response(
            to: Request(method: "HEAD", target: "/open/7"))
        #expect(response.status == 302)
        #expect(response.headers["Location"] == "/objects/7")
    }

    @Test(arguments: ["ObjectID not found", "Not a valid object"])
    func anUnknownObjectIs404(message: String) async throws {
        let upstream = FakeUpstream([Sample.objectKey(7): .notFound(message)])
        let harness = Harness(upstream: upstream)
        for target in ["/open/7", "/open?url=themet://7", "/open/7?format=json"] {
            let response = await harness.get(target)
            #expect(response.status == 404)
            #expect(response.problemCode == "object_not_found")
            #expect(try response.jsonObject()["detail"] as? String == "The Met has no object 7: \(message).")
            #expect(response.headers["Location"] == nil)
        }
        // The Met's 404 is remembered.
        #expect(upstream.calls == [Sample.objectKey(7)])
    }

    @Test func aBlockedUpstreamIs503WithRetryAfterUnlessTheRecordIsCached() async throws {
        let upstream = FakeUpstream([
            Sample.objectKey(7): .json(WidgetSample.record(7)), Sample.objectKey(8): .blockPage,
        ])
        let harness = Harness(upstream: upstream)
        #expect(await harness.get("/open/7").status == 302)

        let blocked = await harness.get("/open/8")
        #expect(blocked.status == 503)
        #expect(blocked.problemCode == "upstream_blocked")
        #expect(blocked.headers["Retry-After"] == "60")
        #expect(blocked.headers["Location"] == nil)

        // A cached record still leads somewhere: fresh, or stale while the Met refuses.
        #expect(await harness.get("/open/7").headers["Location"] == "/objects/7")
        harness.time.advance(by: harness.configuration.cache.freshness.object + 1)
        upstream.answer(.object(id: 7), with: .blockPage)
        let stale = await harness.get("/open/7")
        #expect(stale.status == 302)
        #expect(stale.headers["Location"] == "/objects/7")
        let stillBlocked = await harness.get("/open?url=themet://8")
        #expect(stillBlocked.status == 503)
        #expect(stillBlocked.headers["Retry-After"] != nil)
        #expect(upstream.calls == [Sample.objectKey(7), Sample.objectKey(8), Sample.objectKey(7)])
    }

    @Test(arguments: [
        ("/open", "invalid_parameter", "url"), ("/open?format=json", "invalid_parameter", "url"),
        ("/open?url=", "invalid_parameter", "url"), ("/open?url", "invalid_parameter", "url"),
        ("/open/7?format=xml", "invalid_parameter", "format"), ("/open/7?format=", "invalid_parameter", "format"),
        ("/open/7?x=1", "unknown_parameter", "x"), ("/open/7?url=themet://8", "unknown_parameter", "url"),
        ("/open?url=themet://7&id=8", "unknown_parameter", "id"),
        ("/open?url=themet://7&next=https://evil.example", "unknown_parameter", "next"),
    ])
    func otherParametersAre400(target: String, code: String, parameter: String) async throws {
        let harness = Harness()
        let response = await harness.get(target)
        #expect(response.status == 400)
        #expect(response.problemCode == code)
        #expect(try response.jsonObject()["parameter"] as? String == parameter)
        #expect(harness.upstream.calls.isEmpty)
    }

    @Test(arguments: [
        "/open/0", "/open/01", "/open/abc", "/open/-1", "/open/2147483648", "/open/1%0D%0ASet-Cookie:%20a",
    ])
    func aMalformedIDIs400InvalidObjectID(target: String) async {
        let harness = Harness()
        let response = await harness.get(target)
        #expect(response.status == 400)
        #expect(response.problemCode == "invalid_object_id")
        #expect(harness.upstream.calls.isEmpty)
    }

    @Test(arguments: [
        "/open/", "/open/1/", "/open/1/x", "/open/https:%2F%2Fevil.example", "/open/1%2F..%2F2?format=json", "/OPEN/1",
    ])
    func otherPathsAreNoRoute(target: String) async {
        let response = await Harness().get(target)
        #expect(response.status == 404)
        #expect(response.problemCode == "route_not_found")
    }

    /// Requests that try to put something of their own into `Location` (or another header).
    static let hostileTargets = [
        "/open?url=themet://1%0D%0ASet-Cookie:%20a=b", "/open?url=themet://1%0ALocation:%20https://evil.example",
        "/open?url=javascript:alert(1)", "/open?url=https://evil.example/", "/open?url=themet://1/../x",
        "/open?url=themet://evil.example", "/open?url=themet://1@evil.example", "/open?url=themet://1%23x",
        "/open/1%0D%0ASet-Cookie:%20a=b", "/open/https:%2F%2Fevil.example", "/open/1?format=json%0D%0AX:%20y",
        "/open/1?url=https://evil.example", "/open?url=themet://1&url=https://evil.example",
        "/open?url=https://evil.example&url=themet://x", "/open/1%3Fnext=https://evil.example",
    ]

    @Test func nothingButTheValidatedIDReachesLocation() async throws {
        let upstream = FakeUpstream([Sample.objectKey(1): .json(WidgetSample.record(1))])
        let harness = Harness(upstream: upstream)
        for target in Self.hostileTargets {
            let response = await harness.get(target)
            #expect([400, 404].contains(response.status), "\(target): \(response.status)")
            #expect(response.headers["Location"] == nil, "\(target)")
            #expect(response.headers["Set-Cookie"] == nil)
            for field in response.headers {
                #expect(!field.name.contains { $0.isNewline } && !field.value.contains { $0.isNewline }, "\(target)")
            }
        }
        #expect(upstream.calls.isEmpty)
        // A repeated url is refused outright, whichever of them is valid.
        let repeated = await harness.get("/open?url=https://evil.example&url=themet://1")
        #expect(repeated.status == 400)
        #expect(repeated.problemCode == "invalid_parameter")
        #expect(repeated.headers["Location"] == nil)
    }
}
