import Foundation
import MetEngine
import Testing

@testable import MetFixtures

/// `SearchDocument` reads the same text fields and facts from a record as the fake Met's index
/// (`FixtureRecord`, decoded by Foundation), so local search and the fake Met search the same
/// text: each column holds exactly the fields of its role, in order.
@Suite("SearchDocument reads what the fake Met searches")
struct SearchDocumentTests {
    /// The fixture records, by file name.
    static let records: [(name: String, body: [UInt8])] = {
        let directory = Repository.fixtures + "/public/collection/v1/objects"
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        return names.sorted().compactMap { name in
            FileManager.default.contents(atPath: directory + "/" + name).map { (name, [UInt8]($0)) }
        }
    }()

    @Test func everyFixtureRecordsColumnsHoldTheFieldsOfTheirRole() throws {
        #expect(Self.records.count > 20)
        for (name, body) in Self.records {
            let fields = try JSONDecoder().decode(FixtureRecord.Fields.self, from: Data(body))
            let expected = FixtureRecord.fields(of: fields)
            let document = try #require(SearchDocument(json: body), "\(name)")
            func values(_ test: (FixtureRecord.Roles) -> Bool) -> String {
                expected.filter { test($0.roles) }.map { String(decoding: $0.exact, as: UTF8.self) }.joined(
                    separator: "\n")
            }
            #expect(document.objectID == fields.objectID, "\(name)")
            #expect(document.title == values { $0.contains(.title) }, "\(name)")
            #expect(document.tags == values { $0.contains(.tags) }, "\(name)")
            #expect(document.artist == values { $0.contains(.artistOrCulture) }, "\(name)")
            #expect(document.medium == values { $0.contains(.medium) }, "\(name)")
            #expect(document.place == values { $0.contains(.geo) }, "\(name)")
            #expect(document.text == values { $0 == .text }, "\(name)")
            #expect(document.isHighlight == (fields.isHighlight ?? false), "\(name)")
            #expect(document.isOnView == !(fields.galleryNumber ?? "").isEmpty, "\(name)")
            #expect(document.beginDate == fields.objectBeginDate && document.endDate == fields.objectEndDate, "\(name)")
            #expect(document.department == fields.department, "\(name)")
        }
    }

    /// Tags as 2018's schema wrote them (bare strings) and as today's (`{"term": …}`), mixed with
    /// values that are neither; a member of the wrong type counts as absent.
    @Test func tagsOfBothSchemasAndMembersOfTheWrongTypeAreRead() throws {
        let body = #"""
            {"objectID": 7, "title": 5, "tags": ["Bare", {"term": "Object"}, {"term": 3}, 4, null, {"x": "y"},
             ["Nested"], {"term": "Last", "term": "Ignored"}], "constituents": [{"name": "Ōta"}, {"role": "x"}],
             "isHighlight": "true", "GalleryNumber": "", "primaryImage": "", "primaryImageSmall": "s",
             "objectBeginDate": 1.5, "objectEndDate": -1}
            """#
        let document = try #require(SearchDocument(json: Array(body.utf8)))
        #expect(document.title == "")
        #expect(document.tags == "Bare\nObject\nLast")
        #expect(document.text == "Ōta")
        #expect(!document.isHighlight && !document.isOnView && document.hasImage)
        #expect(document.beginDate == nil && document.endDate == -1)
        #expect(SearchDocument(json: Array(#"{"title": "no ID"}"#.utf8)) == nil)
        #expect(SearchDocument(json: Array(#"{"objectID": 1,}"#.utf8)) == nil)
    }

    @Test(arguments: [
        (1, 1), (100, 1), (101, 2), (1900, 19), (1901, 20), (0, 1), (-1, -1), (-100, -1), (-101, -2), (-500, -5),
        (Int.min, -92_233_720_368_547_759), (Int.max, 92_233_720_368_547_759),
    ])
    func centuries(year: Int, century: Int) {
        var document = SearchDocument(objectID: 1)
        document.beginDate = year
        #expect(document.century == century)
    }
}
