import Foundation
import TestKit
import Testing

@testable import MetCore
@testable import MetEngine
@testable import MetFixtures

/// The repository's `Fixtures` folder.
private let fixtures = Repository.fixtures

@Suite("The fake Met's search generations (--search-api)")
struct SearchFakeMetTests {
    private func fake(_ generations: FakeMet.SearchGenerations) throws -> FakeMet {
        FakeMet(
            archive: try FixtureArchive(directory: fixtures), options: FakeMet.Options(searchAPI: generations),
            time: ManualTime(), compress: { $0 })
    }

    private func answer(_ fake: FakeMet, _ target: String) throws -> Response {
        try #require(fake.readyResponse(to: .get(target)))
    }

    @Test func bothGenerationsAnswerByDefault() throws {
        #expect(FakeMet.Options().searchAPI == .both)
        let fake = try fake(.both)
        #expect(
            try answer(fake, "/public/collection/v1/search?q=cypress").text
                == #"{"total":2,"objectIDs":[436535,437980]}"#)
        #expect(
            try answer(fake, "/public/collection/v1.1/search?q=cypress&limit=1").text
                == #"{"total":2,"objectIDs":[436535]}"#)
    }

    @Test func v1OnlyAnswers404ForV11() throws {
        let fake = try fake(.v1)
        let absent = try answer(fake, "/public/collection/v1.1/search?q=cypress")
        #expect(absent.status == 404)
        #expect(absent.text == #"{"message":"Not Found"}"#)
        #expect(try answer(fake, "/public/collection/v1/search?q=cypress").status == 200)
        #expect(try answer(fake, "/public/collection/v1/objects/436535").status == 200)
    }

    @Test func v11OnlyAnswers410WithTheRetirementNoticeForV1() throws {
        let fake = try fake(.v1_1)
        let retired = try answer(fake, "/public/collection/v1/search?q=cypress")
        #expect(retired.status == 410)
        #expect(retired.headers["Content-Type"] == FixtureArchive.contentType)
        let saved = try #require(FileManager.default.contents(atPath: fixtures + "/" + FakeMet.retiredSearchFile))
        #expect(retired.body == [UInt8](saved))
        let notice = try retired.jsonObject()
        #expect(notice["replacement"] as? String == "/public/collection/v1.1/search")
        #expect(try answer(fake, "/public/collection/v1.1/search?q=cypress").status == 200)
    }

    /// An empty `q` finds nothing on v1 (S-PA), unless a filter narrows the search
    /// (`q=&isHighlight=true` gave 112 highlights, OA#36); a flag not spelled `true` is ignored.
    @Test func v1AnswersAnEmptyQWithNothingUnlessAFilterNarrowsIt() throws {
        let fake = try fake(.both)
        #expect(try answer(fake, "/public/collection/v1/search?q=").text == #"{"total":0,"objectIDs":null}"#)
        #expect(
            try answer(fake, "/public/collection/v1/search?q=&hasImages=true").text == #"{"total":0,"objectIDs":null}"#)
        let highlights = try answer(fake, "/public/collection/v1/search?q=&isHighlight=true").jsonObject()
        let total = try #require(highlights["total"] as? Int)
        #expect(total > 0)
        #expect(
            try answer(fake, "/public/collection/v1/search?q=cypress&isHighlight=True").text
                == #"{"total":2,"objectIDs":[436535,437980]}"#)
    }
}
