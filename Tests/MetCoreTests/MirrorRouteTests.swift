import Testing

@testable import MetCore

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

    @Test(arguments: [
        "/public/collection/v1/search", "/public/collection/v1/search?q=",
        "/public/collection/v1/search?isHighlight=true",
    ])
    func v1SearchWithoutQIsA400WithoutAskingTheMet(target: String) async {
        let harness = Harness()
        let response = await harness.get(target)
        #expect(response.status == 400)
        #expect(response.problemCode == "invalid_parameter")
        #expect(harness.upstream.calls.isEmpty)
    }
}
