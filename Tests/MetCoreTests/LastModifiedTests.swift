import Foundation
import HTTPGrammar
import Testing

@testable import MetCore
@testable import MetEngine

/// `Last-Modified` from a record's `metadataDate` (the fetch time where there is none), and
/// `If-Modified-Since` answered as RFC 9110 says beside the ETags.
@Suite("Last-Modified and If-Modified-Since")
struct LastModifiedTests {
    /// 2023-02-07T04:46:06Z, the record's metadataDate (its fraction dropped).
    static let changed = 1_675_745_166
    static let record =
        #"{"objectID":1,"title":"Wheat Field with Cypresses","metadataDate":"2023-02-07T04:46:06.917Z"}"#

    private static func harness() -> (Harness, fetched: Int) {
        let upstream = FakeUpstream()
        upstream.answer(.object(id: 1), with: .json(record))
        upstream.answer(.object(id: 2), with: .json(#"{"objectID":2,"metadataDate":"2023-02-30T00:00:00Z"}"#))
        upstream.answer(.object(id: 3), with: .notFound())
        upstream.answer(.departments, with: .json(Sample.departments))
        let harness = Harness(upstream: upstream)
        return (harness, Int(harness.time.now().rounded(.down)))
    }

    @Test func aRecordSaysWhenTheMetChangedItAndTheRestWhenTheyWereFetched() async throws {
        let (harness, fetched) = Self.harness()
        for target in ["/objects/1", "/public/collection/v1/objects/1"] {
            let answer = await harness.get(target)
            #expect(answer.headers["Last-Modified"] == "Tue, 07 Feb 2023 04:46:06 GMT", "\(target)")
        }
        // Gzip, projections and a shared hit carry it too.
        #expect(
            await harness.get("/objects/1?fields=title").headers["Last-Modified"] == HTTPDate.imfFixdate(Self.changed))
        #expect(harness.getImmediately("/objects/1")?.headers["Last-Modified"] == HTTPDate.imfFixdate(Self.changed))
        // No date that is one (the 30th of February), a 404 and a list: their fetch.
        for target in ["/objects/2", "/objects/3", "/public/collection/v1/objects/3", "/departments"] {
            #expect(await harness.get(target).headers["Last-Modified"] == HTTPDate.imfFixdate(fetched), "\(target)")
        }
    }

    /// Each `If-Modified-Since` (and `If-None-Match`) against the record changed at `changed`.
    @Test(arguments: [
        (["If-Modified-Since": "Tue, 07 Feb 2023 04:46:06 GMT"], 304),  // not modified since: that very second
        (["If-Modified-Since": "Tuesday, 07-Feb-23 04:46:07 GMT"], 304),  // after it, RFC 850
        (["If-Modified-Since": "Tue Feb  7 04:46:05 2023"], 200),  // the second before it, asctime
        (["If-Modified-Since": "Tue, 07 Feb 2023 04:46:06 UTC"], 200),  // no HTTP-date: ignored
        (["If-Modified-Since": "Fri, 01 Jan 2100 00:00:00 GMT"], 200),  // later than now: ignored
        (["If-Modified-Since": "Tue, 07 Feb 2023 04:46:06 GMT", "If-None-Match": "\"other\""], 200),  // the ETag wins
    ])
    func ifModifiedSinceIsAnsweredBesideTheETag(headers: [String: String], status: Int) async throws {
        let (harness, _) = Self.harness()
        _ = await harness.get("/objects/1")
        var fields = HTTPFields()
        for (name, value) in headers { fields.append(name, value) }
        let answer = await harness.get("/objects/1", headers: fields)
        #expect(answer.status == status)
        #expect(answer.headers["Last-Modified"] == HTTPDate.imfFixdate(Self.changed))
        if status == 304 { #expect(answer.body.isEmpty && answer.headers["ETag"] != nil) }
    }

    @Test func aRemembered404OrTwoFieldsAreNever304() async throws {
        let (harness, fetched) = Self.harness()
        let since = HTTPDate.imfFixdate(fetched + 1)
        _ = await harness.get("/objects/3")
        harness.time.advance(by: 5)
        #expect(await harness.get("/objects/3", headers: ["If-Modified-Since": since]).status == 404)
        _ = await harness.get("/objects/1")
        var twice = HTTPFields()
        twice.append("If-Modified-Since", since)
        twice.append("If-Modified-Since", since)
        #expect(await harness.get("/objects/1", headers: twice).status == 200)
    }

    @Test(arguments: [
        ("2023-02-07T04:46:06.917Z", 1_675_745_166), ("2023-02-07T04:46:06Z", 1_675_745_166),
        ("2020-12-13T04:47:59.42Z", 1_607_834_879), ("2023-02-07t04:46:06z", 1_675_745_166),
        ("2023-02-07T05:46:06+01:00", 1_675_745_166), ("2023-02-06T23:46:06.5-05:00", 1_675_745_166),
    ])
    func metadataDatesAreRFC3339(text: String, seconds: Int) {
        #expect(Timestamp.seconds(rfc3339: text) == seconds)
    }

    @Test(arguments: [
        "", "2023-02-07", "2023-02-07T04:46:06", "2023-02-07T04:46:06.Z", "2023-02-07 04:46:06Z",
        "2023-02-30T04:46:06Z", "2023-02-07T04:46:06+1:00", "2023-02-07T04:46:06Z ", "02/07/2023",
        "2023-02-07T04:46:06+24:00",
    ])
    func otherDatesAreNone(text: String) {
        #expect(Timestamp.seconds(rfc3339: text) == nil)
    }
}
