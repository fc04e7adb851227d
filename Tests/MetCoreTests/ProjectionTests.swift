import Foundation
import Testing

@testable import MetCore
@testable import MetEngine

@Suite("fields= projection")
struct ProjectionTests {
    private func project(_ json: String, _ fields: Set<String>) -> String? {
        JSONProjection.project(Array(json.utf8), fields: fields).map { String(decoding: $0, as: UTF8.self) }
    }

    @Test func keepsOnlyTheNamedMembersInDocumentOrderWithTheirExactText() {
        let json = #"{"objectID":1,"title":"A \"quoted\" \\ title","weight":1.50E+2,"tags":null,"isHighlight":true}"#
        #expect(
            project(json, ["weight", "title", "missing"]) == #"{"title":"A \"quoted\" \\ title","weight":1.50E+2}"#)
    }

    @Test func nestedValuesAreCopiedWhole() {
        let json = #"{"a":[{"b":[1,{"c":"]}"}]},{}],"d":{"e":{"f":[[]]}},"g":"{"}"#
        #expect(project(json, ["a", "d"]) == #"{"a":[{"b":[1,{"c":"]}"}]},{}],"d":{"e":{"f":[[]]}}}"#)
        #expect(project(json, ["g"]) == #"{"g":"{"}"#)
    }

    @Test func whitespaceBetweenTokensIsDroppedButKeptInsideValues() {
        let json = "\n{ \"a\" :\t1 ,\r\n \"b\" : [ 1 , 2 ] , \"c\" : \"x y\" }\n"
        #expect(project(json, ["a", "b", "c"]) == #"{"a":1,"b":[ 1 , 2 ],"c":"x y"}"#)
    }

    @Test func escapesInStringsDoNotEndThem() {
        let json = #"{"a":"\\","b":"\"","c":"\u0022}","d":2}"#
        #expect(project(json, ["a", "b", "c", "d"]) == json)
        #expect(project(json, ["d"]) == #"{"d":2}"#)
    }

    @Test func unicodeIsCopiedByteForByte() {
        let json = #"{"title":"Café – 漢字 🎨","x":0}"#
        #expect(project(json, ["title"]) == #"{"title":"Café – 漢字 🎨"}"#)
    }

    @Test(arguments: [
        (#"{"a":1}"#, Set(["zzz"]), "{}"), ("{}", Set(["a"]), "{}"), (" { } ", Set(["a"]), "{}"),
        (#"{"a":-0.5e-3,"b":false}"#, Set(["a", "b"]), #"{"a":-0.5e-3,"b":false}"#),
    ])
    func edgeCasesProjectAsExpected(json: String, fields: Set<String>, expected: String) {
        #expect(project(json, fields) == expected)
    }

    @Test(arguments: [
        "", "[1,2]", "\"text\"", "42", "{", #"{"a":1"#, #"{"a":"#, #"{"a":"x"#, #"{"a":[1,2}"#, #"{"a" 1}"#,
        #"{a:1}"#,
    ])
    func notAnObjectOrCutShortIsNil(json: String) {
        #expect(project(json, ["a"]) == nil)
    }

    @Test func theProjectionIsValidJSONForRealisticBodies() throws {
        let projected = try #require(project(Sample.object(1), ["measurements", "title", "tags", "objectID"]))
        let object = try #require(try JSONSerialization.jsonObject(with: Data(projected.utf8)) as? [String: Any])
        #expect(Set(object.keys) == ["measurements", "title", "tags", "objectID"])
        #expect(object["objectID"] as? Int == 1)
    }

    @Test func theServiceProjectsWithItsOwnETagAndOneUpstreamCall() async throws {
        let upstream = FakeUpstream([Sample.objectKey(1): .json(Sample.object(1))])
        let harness = Harness(upstream: upstream)
        let whole = await harness.get("/objects/1")
        let projected = await harness.get("/objects/1?fields=title,objectID")
        #expect(projected.status == 200)
        #expect(projected.text == #"{"objectID":1,"title":"Wheat Field with Cypresses"}"#)
        let etag = try #require(projected.headers["ETag"])
        #expect(etag == ETag.strong(for: projected.body))
        #expect(etag != whole.headers["ETag"])
        #expect(upstream.calls.count == 1)

        let notModified = try #require(
            harness.getImmediately("/objects/1?fields=objectID,title", headers: ["If-None-Match": etag]))
        #expect(notModified.status == 304)
        let wholeTag = try #require(whole.headers["ETag"])
        let other = try #require(
            harness.getImmediately("/objects/1?fields=title", headers: ["If-None-Match": wholeTag]))
        #expect(other.status == 200)
        #expect(other.text == #"{"title":"Wheat Field with Cypresses"}"#)
    }

    @Test func theFieldsOrderInTheQueryDoesNotMatter() async throws {
        let upstream = FakeUpstream([Sample.objectKey(1): .json(Sample.object(1))])
        let harness = Harness(upstream: upstream)
        let a = await harness.get("/objects/1?fields=tags,objectID,measurements")
        let b = try #require(harness.getImmediately("/objects/1?fields=measurements,tags,objectID,tags"))
        #expect(a.body == b.body)
        #expect(a.headers["ETag"] == b.headers["ETag"])
    }

    @Test func aNotFoundObjectIsStillAProblemWithFields() async {
        let upstream = FakeUpstream([Sample.objectKey(9): .notFound()])
        let response = await Harness(upstream: upstream).get("/objects/9?fields=title")
        #expect(response.problemCode == "object_not_found")
    }
}
