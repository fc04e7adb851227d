import Foundation
import HTTPGrammar
import Testing

@testable import MetCore
@testable import MetEngine

@Suite("Routing, validation and problem documents")
struct RoutingTests {
    @Test(arguments: [
        "//", "/nope", "/index.html", "/objects/", "/objects/1/", "/objects/1/extra", "/health/", "/random/",
        "/explorer.js/", "/iiif/1", "/iiif/1/manifest.json/", "/OBJECTS/1", "/public/collection",
    ])
    func anUnknownPathIs404RouteNotFound(target: String) async throws {
        let harness = Harness()
        let response = await harness.get(target)
        #expect(response.status == 404)
        #expect(response.problemCode == "route_not_found")
        #expect(harness.upstream.calls.isEmpty)
    }

    @Test(arguments: ["/public/collection/v1", "/public/collection/v1/objects/", "/public/collection/v2/search"])
    func anUnknownPathUnderTheMirrorIs404InTheMetsDialect(target: String) async throws {
        let harness = Harness()
        let response = await harness.get(target)
        #expect(response.status == 404)
        #expect(response.headers["Content-Type"] == Response.jsonContentType)
        #expect(try response.jsonObject().keys.sorted() == ["message"])
        #expect(harness.upstream.calls.isEmpty)
    }

    /// Every route with a query it takes, and with `_=…` (a cache-buster) added: the same answer,
    /// the same upstream calls, the same keys.
    @Test(arguments: [
        "/objects/1", "/objects/1?fields=title", "/departments", "/search?q=cypress", "/widget/timeline",
        "/open/1?format=json", "/open?url=themet://1&format=json", "/objects?ids=1", "/random?format=json&q=cypress",
        "/iiif/1/manifest.json", "/health", "/openapi.yaml", "/", "/public/collection/v1/objects/1",
        "/public/collection/v1/departments", "/public/collection/v1/search?q=cypress",
    ])
    func aCacheBusterIsIgnoredEverywhere(target: String) async throws {
        func run(_ target: String) async -> (status: Int, calls: [String]) {
            let upstream = FakeUpstream([
                Sample.objectKey(1): .json(Sample.object(1)),
                MetResource.departments.cacheKey: .json(#"{"departments":[]}"#),
            ])
            upstream.answer(
                MetResource.search(
                    .v1_1, filters: [.init(name: "hasImages", value: "true")], q: "cypress", page: (0, 100)),
                with: .json(#"{"total":1,"objectIDs":[1]}"#))
            upstream.answer(
                MetResource.search(.v1, filters: [], q: "cypress"), with: .json(#"{"total":1,"objectIDs":[1]}"#))
            let harness = Harness(upstream: upstream)
            let response = await harness.get(target)
            return (response.status, upstream.calls)
        }
        let separator = target.contains("?") ? "&" : "?"
        let plain = await run(target)
        let busted = await run(target + separator + "_=1733040000000")
        let twice = await run(target + separator + "_=1&_=2")
        #expect(plain.status != 400, "\(target): \(plain.status)")
        #expect(busted.status == plain.status)
        #expect(busted.calls == plain.calls)
        #expect(twice.status == plain.status)
    }

    @Test(arguments: [
        ("/objects/1?fields=title&fields=objectID", "fields"), ("/search?q=a&q=b", "q"),
        ("/search?q=a&isHighlight=true&isHighlight=false", "isHighlight"), ("/objects?ids=1&ids=2", "ids"),
        ("/widget/timeline?family=medium&family=large", "family"),
        ("/widget/timeline?q=a&interval=60&interval=120", "interval"),
        ("/random?departmentId=1&departmentId=2", "departmentId"), ("/open/1?format=json&format=json", "format"),
        ("/open?url=themet://1&url=themet://2", "url"), ("/random?q=a&format=json&format=json", "format"),
    ])
    func aRepeatedParameterIsA400NamingIt(target: String, parameter: String) async throws {
        let harness = Harness()
        let response = try #require(harness.getImmediately(target))
        #expect(response.status == 400)
        #expect(response.problemCode == "invalid_parameter")
        #expect(try response.jsonObject()["parameter"] as? String == parameter)
        #expect(try response.jsonObject()["detail"] as? String == "\(parameter) is given more than once.")
        #expect(harness.upstream.calls.isEmpty)
    }

    @Test func aProblemDocumentHasTheRFC9457Shape() async throws {
        let response = await Harness().get("/nope")
        #expect(response.headers["Content-Type"] == "application/problem+json")
        #expect(response.headers["Cache-Control"] == "no-store")
        let document = try response.jsonObject()
        #expect(Set(document.keys) == ["type", "title", "status", "detail", "code"])
        #expect(document["type"] as? String == "urn:themet:problem:route_not_found")
        #expect(document["title"] as? String == "No such route")
        #expect(document["status"] as? Int == 404)
        #expect((document["detail"] as? String)?.contains("/nope") == true)
        #expect(document["code"] as? String == "route_not_found")
    }

    @Test(arguments: ProblemCode.allCases)
    func everyProblemCodeRendersItsStatusTitleAndType(code: ProblemCode) throws {
        let problem = Problem(code, "Detail with \"quotes\" and\na newline.", parameter: "p")
        let response = problem.response
        #expect(response.status == code.status)
        let document = try response.jsonObject()
        #expect(document["code"] as? String == code.rawValue)
        #expect(document["status"] as? Int == code.status)
        #expect(document["title"] as? String == code.title)
        #expect(document["type"] as? String == problem.type)
        #expect(document["detail"] as? String == "Detail with \"quotes\" and\na newline.")
        #expect(document["parameter"] as? String == "p")
    }

    @Test(arguments: ["POST", "PUT", "DELETE", "PATCH", "TRACE", "BREW"])
    func anotherMethodOnAKnownRouteIs405WithAllow(method: String) async throws {
        let harness = Harness()
        let response = await harness.service.response(to: Request(method: method, target: "/objects/1"))
        #expect(response.status == 405)
        #expect(response.problemCode == "method_not_allowed")
        #expect(response.headers["Allow"] == "GET, HEAD, OPTIONS")
        #expect(harness.upstream.calls.isEmpty)
    }

    @Test func anotherMethodOnAnUnknownPathIs404() async {
        let response = await Harness().service.response(to: Request(method: "POST", target: "/nope"))
        #expect(response.status == 404)
    }

    @Test(arguments: ["/objects/1", "/departments", "/health", "/public/collection/v1/objects", "/openapi.yaml"])
    func optionsIsAPreflightAnsweredWith204AndCORSHeaders(target: String) async throws {
        let harness = Harness()
        let request = Request(
            method: "OPTIONS", target: target,
            headers: [
                "Origin": "https://app.example", "Access-Control-Request-Method": "GET",
                "Access-Control-Request-Headers": "If-None-Match, X-Requested-With",
            ])
        let response = try #require(harness.service.readyResponse(to: request))
        #expect(response.status == 204)
        #expect(response.body.isEmpty)
        #expect(response.headers["Access-Control-Allow-Origin"] == "*")
        #expect(response.headers["Access-Control-Allow-Methods"] == "GET, HEAD, OPTIONS")
        #expect(response.headers["Access-Control-Allow-Headers"] == "If-None-Match, X-Requested-With")
        #expect(response.headers["Access-Control-Max-Age"] == "86400")
        #expect(response.headers["Allow"] == "GET, HEAD, OPTIONS")
        #expect(harness.upstream.calls.isEmpty)
    }

    @Test(arguments: ["", "X-Evil\r\nSet-Cookie: a=b", "<script>"])
    func aPreflightWithoutUsableRequestedHeadersAllowsTheDefaults(asked: String) throws {
        let request = Request(
            method: "OPTIONS", target: "/objects/1", headers: ["Access-Control-Request-Headers": asked])
        let response = try #require(Harness().service.readyResponse(to: request))
        #expect(
            response.headers["Access-Control-Allow-Headers"]
                == "Accept, Accept-Encoding, If-None-Match, If-Modified-Since")
    }

    @Test(arguments: [
        ("If-None-Match,X-Requested-With", "If-None-Match, X-Requested-With"),
        (" \tIf-None-Match \t,\tX-A ", "If-None-Match, X-A"),
        (",, ,If-None-Match,,", "If-None-Match"),
        ("x!#$%&'*+-.^_`|~9", "x!#$%&'*+-.^_`|~9"),
        // Elements that are not tokens are dropped; the tokens around them stay.
        ("If-None-Match, Äpfel, X-A", "If-None-Match, X-A"),
        ("If-None-Match, \"X-Quoted\", X-A", "If-None-Match, X-A"),
        ("If-None-Match, X A, X(B), X/C, X:D, X;E, X=F, X@G, X?H, X[I], X{J}, X\\K, X<L>", "If-None-Match"),
        ("X-A\u{0}, X-B\u{7F}, X-C\u{1}, X-D", "X-D"),
        ("X-A\r\nSet-Cookie: a=b, X-B", "X-B"),
        ("X-\u{FFFD}, X-\u{301}, X-B", "X-B"),
        (",\u{301}X-A, X-B", "X-B"),
        (
            "\(String(repeating: "a", count: 65)), \(String(repeating: "b", count: 64))",
            String(repeating: "b", count: 64)
        ),
        (
            (1...40).map { "X-\($0)" }.joined(separator: ","),
            (1...CORSHeaders.maxNames).map { "X-\($0)" }.joined(separator: ", ")
        ),
        ("Äpfel, \"q\"", CORSHeaders.defaultAllowed),
    ])
    func aPreflightEchoesOnlyTheTokensItWasAskedFor(asked: String, allowed: String) throws {
        let request = Request(
            method: "OPTIONS", target: "/search", headers: ["Access-Control-Request-Headers": asked])
        let response = try #require(Harness().service.readyResponse(to: request))
        #expect(response.status == 204)
        let value = try #require(response.headers["Access-Control-Allow-Headers"])
        #expect(value == allowed)
        #expect(value.utf8.allSatisfy { Grammar.isTokenByte($0) || $0 == UInt8(ascii: ",") || $0 == 0x20 })
    }

    @Test func aListedOriginIsEchoedOnEveryResponseAndOthersAreNot() async throws {
        let upstream = FakeUpstream([Sample.objectKey(1): .json(Sample.object(1))])
        let harness = Harness(upstream: upstream) {
            $0.access.cors = .origins(["https://app.example", "http://localhost:5173"])
        }
        let targets: [(String, String)] = [
            ("GET", "/objects/1"), ("GET", "/objects/1"), ("GET", "/objects/abc"), ("GET", "/nope"),
            ("GET", "/health"), ("GET", "/openapi.yaml"), ("DELETE", "/objects/1"), ("OPTIONS", "/objects/1"),
            ("GET", "/public/collection/v1/objects/abc"),
            ("GET", "/objects/2"),  // the fake has no answer: a 502 problem
        ]
        for (method, target) in targets {
            for origin in ["https://app.example", "http://localhost:5173"] {
                let response = await harness.service.response(
                    to: Request(method: method, target: target, headers: ["Origin": origin]))
                #expect(response.headers["Access-Control-Allow-Origin"] == origin, "\(method) \(target)")
                #expect(response.headers["Access-Control-Expose-Headers"]?.contains("Cache-Status") == true)
                #expect(response.headers.values(for: "Vary").count == 1)
                #expect(response.headers["Vary"]?.contains("Origin") == true)
            }
            for origin: String? in ["https://evil.example", "https://app.example:8443", nil] {
                var headers = HTTPFields()
                if let origin { headers.append("Origin", origin) }
                let response = await harness.service.response(
                    to: Request(method: method, target: target, headers: headers))
                #expect(response.headers["Access-Control-Allow-Origin"] == nil, "\(method) \(target) \(origin ?? "-")")
                #expect(response.headers["Vary"]?.contains("Origin") == true)
            }
        }
        // A plain hit is shared by every request in the second: each origin still gets its own.
        for origin in ["https://app.example", "http://localhost:5173", "https://app.example"] {
            let hit = try #require(
                harness.service.readyResponse(
                    to: Request(method: "GET", target: "/objects/1", headers: ["Origin": origin])))
            #expect(hit.headers["Access-Control-Allow-Origin"] == origin)
            #expect(hit.headers.values(for: "Vary") == ["Origin"])
        }
        let bare = try #require(harness.getImmediately("/objects/1"))
        #expect(bare.headers["Access-Control-Allow-Origin"] == nil)
    }

    @Test func originJoinsTheVaryFieldThereIs() {
        var headers: HTTPFields = ["Vary": "Accept-Encoding"]
        CORSLayer.addVary("Origin", to: &headers)
        #expect(headers.values(for: "Vary") == ["Accept-Encoding, Origin"])
        var none = HTTPFields()
        CORSLayer.addVary("Origin", to: &none)
        #expect(none.values(for: "Vary") == ["Origin"])
    }

    @Test func anyOriginIsStarWithoutVaryingByOrigin() async throws {
        let upstream = FakeUpstream([Sample.objectKey(1): .json(Sample.object(1))])
        let harness = Harness(upstream: upstream)
        let response = await harness.service.response(
            to: Request(method: "GET", target: "/objects/1", headers: ["Origin": "https://x.example"]))
        #expect(response.headers["Access-Control-Allow-Origin"] == "*")
        #expect(response.headers["Vary"]?.contains("Origin") != true)
        let preflight = await harness.service.response(
            to: Request(
                method: "OPTIONS", target: "/search", headers: ["Access-Control-Request-Headers": "If-None-Match"]))
        #expect(preflight.headers["Vary"] == "Access-Control-Request-Headers")
        #expect(preflight.headers["Access-Control-Allow-Origin"] == "*")
    }

    @Test(arguments: [
        "+1", "-1", "0", "01", "1.5", "abc", "99999999999", "2147483648", "1e3", "%201", "%EF%BC%91", "1%20",
    ])
    func aMalformedObjectIDIs400InvalidObjectID(id: String) async throws {
        let harness = Harness()
        let response = try #require(harness.getImmediately("/objects/\(id)"))
        #expect(response.status == 400)
        #expect(response.problemCode == "invalid_object_id")
        #expect(harness.upstream.calls.isEmpty)
    }

    @Test(arguments: [("1", 1), ("2147483647", 2_147_483_647), ("436535", 436_535), ("%34%33", 43)])
    func aWellFormedObjectIDIsFetchedFromTheMet(text: String, id: Int) async {
        let harness = Harness()
        harness.upstream.answer(.object(id: id), with: .json(Sample.object(id)))
        let response = await harness.get("/objects/\(text)")
        #expect(response.status == 200)
        #expect(harness.upstream.calls == [Sample.objectKey(id)])
    }

    @Test(arguments: [
        ("/objects/1?foo=1", "foo"), ("/objects/1?fields=title&Fields=x", "Fields"), ("/departments?q=x", "q"),
        ("/departments?x", "x"),
    ])
    func anUnknownParameterIs400UnknownParameter(target: String, parameter: String) async throws {
        let harness = Harness()
        let response = try #require(harness.getImmediately(target))
        #expect(response.status == 400)
        #expect(response.problemCode == "unknown_parameter")
        #expect(try response.jsonObject()["parameter"] as? String == parameter)
    }

    @Test(arguments: [
        "", ",", "title,", ",title", "title,,objectID", "ti-tle", "title%20", "caf%C3%A9", "a.b",
        String(repeating: "a", count: 65), (1...65).map { "f\($0)" }.joined(separator: ","),
    ])
    func aMalformedFieldsListIs400InvalidParameter(fields: String) async throws {
        let harness = Harness()
        let response = try #require(harness.getImmediately("/objects/1?fields=\(fields)"))
        #expect(response.status == 400)
        #expect(response.problemCode == "invalid_parameter")
        #expect(try response.jsonObject()["parameter"] as? String == "fields")
        #expect(harness.upstream.calls.isEmpty)
    }

    private static func limitedHarness() -> Harness {
        Harness { configuration in
            configuration.http.limits.maxURILength = 32
            configuration.http.limits.maxHeaderBytes = 64
            configuration.http.limits.maxBodyBytes = 8
        }
    }

    @Test func aTargetLongerThanTheLimitIs414() throws {
        let harness = Self.limitedHarness()
        let atLimit = "/health?pad=" + String(repeating: "a", count: 32 - 12)
        #expect(try #require(harness.getImmediately(atLimit)).status == 200)
        let response = try #require(harness.getImmediately(atLimit + "a"))
        #expect(response.status == 414)
        #expect(response.problemCode == "uri_too_long")
    }

    @Test func headerFieldsLargerThanTheLimitAre431() throws {
        let harness = Self.limitedHarness()
        // Each field costs name + value + 4 bytes (": " and CRLF).
        let atLimit: HTTPFields = ["X-Pad": String(repeating: "v", count: 64 - 5 - 4)]
        #expect(try #require(harness.getImmediately("/health", headers: atLimit)).status == 200)
        let over: HTTPFields = ["X-Pad": String(repeating: "v", count: 64 - 5 - 4), "A": ""]
        let response = try #require(harness.getImmediately("/health", headers: over))
        #expect(response.status == 431)
        #expect(response.problemCode == "headers_too_large")
    }

    @Test func aBodyLargerThanTheLimitIs413() throws {
        let harness = Self.limitedHarness()
        let atLimit = Request(method: "GET", target: "/health", body: Array(repeating: 0x41, count: 8))
        #expect(try #require(harness.service.readyResponse(to: atLimit)).status == 200)
        let over = Request(method: "POST", target: "/nope", body: Array(repeating: 0x41, count: 9))
        let response = try #require(harness.service.readyResponse(to: over))
        #expect(response.status == 413)
        #expect(response.problemCode == "body_too_large")
    }

    @Test(arguments: ["/%zz", "/objects/%"])
    func aMalformedTargetIs400InvalidRequestTarget(target: String) throws {
        let response = try #require(Harness().getImmediately(target))
        #expect(response.status == 400)
        #expect(response.problemCode == "invalid_request_target")
    }

    @Test func headIsAnsweredLikeGet() async {
        let harness = Harness()
        harness.upstream.answer(.object(id: 1), with: .json(Sample.object(1)))
        let head = await harness.service.response(to: Request(method: "HEAD", target: "/objects/1"))
        let get = await harness.get("/objects/1")
        #expect(head.status == 200)
        #expect(head.headers["ETag"] == get.headers["ETag"])
        #expect(harness.upstream.calls.count == 1)
    }

    @Test func openAPIDocumentIsServedAsYAMLWithAnETag() throws {
        let harness = Harness()
        let response = try #require(harness.getImmediately("/openapi.yaml"))
        #expect(response.status == 200)
        #expect(response.body == Harness.openAPI)
        #expect(response.headers["Content-Type"] == "application/yaml; charset=utf-8")
        let etag = try #require(response.headers["ETag"])
        let revalidated = try #require(harness.getImmediately("/openapi.yaml", headers: ["If-None-Match": etag]))
        #expect(revalidated.status == 304)
    }

    @Test func openAPIDocumentNeverAgesWhileTheServerRuns() throws {
        let harness = Harness()
        harness.time.advance(by: 10 * 86_400)
        let response = try #require(harness.getImmediately("/openapi.yaml"))
        #expect(response.headers["Cache-Control"] == "max-age=3600")
        #expect(response.headers["Age"] == "0")
        // Dated when sent, not when the process started: made, not fetched.
        #expect(response.date == nil)
        #expect(harness.getImmediately("/")?.date == nil)
    }
}
