import Testing

@testable import MetCore
@testable import MetEngine

@Suite("Mirror routes speak the Met's dialect")
struct MirrorRouteTests {
    /// A body with the Met's spacing quirks and escapes: it must come back byte for byte.
    private static let oddBody =
        "{ \"objectID\" : 45734,\n  \"title\":\"Quail and Millet \\u2014 \\\"Edo\\\"\", \"tags\":[ ],"
        + "\"weight\":1.50E+2, \"empty\":\"\" }\n"

    @Test func anObjectComesBackByteForByte() async {
        let upstream = FakeUpstream([Sample.objectKey(45_734): .json(Self.oddBody)])
        let harness = Harness(upstream: upstream)
        let response = await harness.get("/public/collection/v1/objects/45734")
        #expect(response.status == 200)
        #expect(response.body == Array(Self.oddBody.utf8))
        #expect(response.headers["Content-Type"] == "application/json; charset=utf-8")
        #expect(await harness.get("/objects/45734").body == Array(Self.oddBody.utf8))
    }

    @Test(arguments: ["abc", "1.5", "336228.5", "%20", "1a", "-", "+1", "1e3", "--1"])
    func aNonIntegerIDIsTheMets400(id: String) throws {
        let harness = Harness()
        let response = try #require(harness.getImmediately("/public/collection/v1/objects/\(id)"))
        #expect(response.status == 400)
        #expect(response.text == #"{"message":"could not parse objectID"}"#)
        #expect(response.headers["Content-Type"] == "application/json; charset=utf-8")
        #expect(harness.upstream.calls.isEmpty)
    }

    @Test(arguments: ["0", "-1", "-10000000", "99999999999"])
    func anIntegerThatCannotBeAnIDIsTheMets404(id: String) throws {
        let harness = Harness()
        let response = try #require(harness.getImmediately("/public/collection/v1/objects/\(id)"))
        #expect(response.status == 404)
        #expect(response.text == #"{"message":"ObjectID not found"}"#)
        #expect(harness.upstream.calls.isEmpty)
    }

    @Test(arguments: ["abc", "2023-02-29", "1987-5-3", "03-05-1987", "1987-05-03T00:00:00"])
    func aBadMetadataDateIsTheMetsBareString400(date: String) throws {
        let harness = Harness()
        let response = try #require(harness.getImmediately("/public/collection/v1/objects?metadataDate=\(date)"))
        #expect(response.status == 400)
        #expect(response.text == #""Date not valid. Dates must be in the format YYYY-MM-DD e.g. 1987-05-03""#)
        #expect(response.headers["Content-Type"] == "application/json; charset=utf-8")
        #expect(harness.upstream.calls.isEmpty)
    }

    @Test func aGoodMetadataDateIsPassedUpstream() async {
        let key = MetResource.basePath + "/objects?metadataDate=2024-02-29"
        let upstream = FakeUpstream([key: .json(Sample.objectList)])
        let response = await Harness(upstream: upstream).get("/public/collection/v1/objects?metadataDate=2024-02-29")
        #expect(response.status == 200)
        #expect(response.body == Array(Sample.objectList.utf8))
        #expect(upstream.calls == [key])
    }

    @Test func anUnknownDepartmentIsAnEmptyList() async {
        let empty = #"{"total":0,"objectIDs":[]}"#
        let key = MetResource.basePath + "/objects?departmentIds=999"
        let upstream = FakeUpstream([key: .json(empty)])
        let response = await Harness(upstream: upstream).get("/public/collection/v1/objects?departmentIds=999")
        #expect(response.status == 200)
        #expect(response.text == empty)
    }

    @Test func departmentsComeBackByteForByteOnBothRoutes() async {
        let upstream = FakeUpstream([MetResource.departments.cacheKey: .json(Sample.departments)])
        let harness = Harness(upstream: upstream)
        let mirror = await harness.get("/public/collection/v1/departments")
        let ours = await harness.get("/departments")
        #expect(mirror.body == Array(Sample.departments.utf8))
        #expect(ours.body == mirror.body)
        #expect(upstream.calls.count == 1)
    }

    @Test func anObjectNotFoundByTheMetIsItsOwnBody() async {
        let upstream = FakeUpstream([Sample.objectKey(101_039): .notFound("Not a valid object")])
        let response = await Harness(upstream: upstream).get("/public/collection/v1/objects/101039")
        #expect(response.status == 404)
        #expect(response.text == #"{"message":"Not a valid object"}"#)
    }

    @Test(arguments: ["/public/collection/v1/search", "/public/collection/v1/search?isHighlight=true"])
    func v1SearchWithoutQIsA400InTheMetsDialectWithoutAskingTheMet(target: String) async throws {
        let harness = Harness()
        let response = await harness.get(target)
        #expect(response.status == 400)
        #expect(
            try response.jsonObject()["message"] as? String == "q is required: the Met's v1 search fails without it.")
        #expect(response.problemCode == nil)
        #expect(harness.upstream.calls.isEmpty)
    }

    @Test func anEmptyQGoesToTheMetAsSentAndValuesAsTheClientWroteThem() async throws {
        let harness = Harness()
        let resource = MetResource.search(.v1, filters: [.init(name: "isHighlight", value: "True")], q: "")
        harness.upstream.answer(resource, with: .json(#"{"total":0,"objectIDs":null}"#))
        let response = await harness.get("/public/collection/v1/search?q=&isHighlight=True&_=1733040000000")
        #expect(response.status == 200)
        #expect(response.text == #"{"total":0,"objectIDs":null}"#)
        #expect(harness.upstream.calls == [resource.cacheKey])
    }

    @Test func aRepeatedTermFilterAsksForEveryTermAndOtherRepeatsKeepTheLast() throws {
        let target =
            "/public/collection/v1/search?medium=Paintings&medium=Ceramics&medium=Paintings"
            + "&isHighlight=false&isHighlight=true&q=cat"
        let resource = MirrorRoutes.searchResource(.v1, try RequestTarget(parsing: target))
        #expect(
            resource.query.map { "\($0.name)=\($0.value)" } == [
                "isHighlight=true", "medium=Ceramics|Paintings", "q=cat",
            ])
    }

    @Test(arguments: [
        (UpstreamError.timeout, 504), (.unreachable("no route"), 502), (.status(500), 502), (.blocked, 503),
    ])
    func anUpstreamFailureOnTheMirrorIsSaidTheMetsWay(error: UpstreamError, status: Int) async throws {
        let upstream = FakeUpstream([Sample.objectKey(7): .failure(error)])
        let response = await Harness(upstream: upstream).get("/public/collection/v1/objects/7")
        #expect(response.status == status)
        #expect(response.problemCode == nil)
        #expect(try response.jsonObject().keys.sorted() == ["message"])
        if status == 503 { #expect(response.headers["Retry-After"] != nil) }
        let ours = await Harness(upstream: upstream).get("/objects/7")
        #expect(ours.status == status)
        #expect(ours.problemCode != nil)
    }

    @Test func aMethodTheMirrorDoesNotTakeIsA405InTheMetsDialect() async throws {
        let response = await Harness().service.response(
            to: Request(method: "POST", target: "/public/collection/v1/departments"))
        #expect(response.status == 405)
        #expect(response.headers["Allow"] == "GET, HEAD, OPTIONS")
        #expect(try response.jsonObject()["message"] as? String != nil)
    }
}
