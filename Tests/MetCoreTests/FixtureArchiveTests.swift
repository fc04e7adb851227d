import Foundation
import Testing

@testable import MetCore
@testable import MetEngine
@testable import MetFixtures

/// The repository's `Fixtures` folder.
private let fixturesDirectory = Repository.fixtures

/// The archive without synthetic records, loaded once for the whole suite.
private let fixturesOnly: FixtureArchive = {
    do {
        return try FixtureArchive(directory: fixturesDirectory)
    } catch {
        preconditionFailure("cannot load the fixtures: \(error)")
    }
}()

/// Every fixture object ID, ascending.
private let allFixtureIDs = [
    1, 1027, 45734, 47533, 63372, 198799, 203933, 309529, 321412, 336228, 341910, 352204, 356497, 436286, 436533,
    436535, 437056, 437980, 452641, 452655, 454811, 460863, 485938, 544120, 843269,
]

/// `answer` for a raw target such as `/public/collection/v1/search?q=x`.
private func get(_ target: String, from archive: FixtureArchive = fixturesOnly) throws -> UpstreamReply {
    let parsed = try RequestTarget(parsing: target)
    return archive.answer(path: parsed.path, query: parsed.query)
}

/// The body as text.
private func text(_ reply: UpstreamReply) -> String {
    String(decoding: reply.body, as: UTF8.self)
}

/// `{"total":…,"objectIDs":…}` decoded; `ids` is nil for `null`.
private struct IDList: Decodable, Equatable {
    var total: Int
    var objectIDs: [Int]?
}

private func ids(_ reply: UpstreamReply) throws -> IDList {
    try JSONDecoder().decode(IDList.self, from: Data(reply.body))
}

private func fileBytes(_ relativePath: String) throws -> [UInt8] {
    [UInt8](try #require(FileManager.default.contents(atPath: fixturesDirectory + "/" + relativePath)))
}

@Suite("Fixture archive: objects, departments, lists")
struct FixtureArchiveTests {
    @Test func loadsEveryFixtureObject() {
        #expect(fixturesOnly.fixtureObjectIDs == allFixtureIDs)
    }

    @Test(arguments: allFixtureIDs)
    func objectAnswersTheFixtureBytesUnchanged(id: Int) throws {
        let reply = try get("/public/collection/v1/objects/\(id)")
        #expect(reply.status == 200)
        #expect(reply.contentType == "application/json; charset=UTF-8")
        #expect(reply.body == (try fileBytes("public/collection/v1/objects/\(id).json")))
    }

    @Test func theDemoObjectIsServedInItsOldSchema() throws {
        let reply = try get("/public/collection/v1/objects/436535")
        #expect(reply.status == 200)
        #expect(text(reply).contains("Wheat Field with Cypresses"))
    }

    @Test(arguments: ["0", "-1", "999999999", "2", "-10000000"])
    func unknownIntegerIDsAreNotFound(id: String) throws {
        let reply = try get("/public/collection/v1/objects/\(id)")
        #expect(reply.status == 404)
        #expect(text(reply) == #"{"message":"ObjectID not found"}"#)
    }

    @Test(arguments: [101039, 855340])
    func withdrawnIDsAreNotValidObjects(id: Int) throws {
        let reply = try get("/public/collection/v1/objects/\(id)")
        #expect(reply.status == 404)
        #expect(text(reply) == #"{"message":"Not a valid object"}"#)
    }

    @Test(arguments: ["abc", "336228.5", "1e3", "99999999999999999999999"])
    func nonIntegerIDsCannotBeParsed(id: String) throws {
        let reply = try get("/public/collection/v1/objects/\(id)")
        #expect(reply.status == 400)
        #expect(text(reply) == #"{"message":"could not parse objectID"}"#)
    }

    @Test func departmentsAnswerTheSavedList() throws {
        let reply = try get("/public/collection/v1/departments")
        #expect(reply.status == 200)
        #expect(reply.body == (try fileBytes("public/collection/v1/departments.json")))
    }

    @Test func aSavedListAnswersExactlyItsQuery() throws {
        let reply = try get("/public/collection/v1/objects?departmentIds=3")
        #expect(reply.status == 200)
        #expect(reply.body == (try fileBytes("public/collection/v1/objects@departmentIds=3.json")))
        #expect(try ids(reply).total == 6222)
    }

    @Test(arguments: [
        ("departmentIds=11", [436286, 436533, 436535, 437056, 437980]),
        ("departmentIds=1|15", [1, 1027, 460863]),
        ("departmentIds=5", [309529]),
        ("departmentIds=21", [485938]),
        ("departmentIds=3|10", [321412, 544120]),
        ("metadataDate=2025-03-06", [63372, 336228, 341910, 352204, 356497]),
        ("departmentIds=9&metadataDate=2025-06-01", [336228, 356497]),
    ])
    func listsAreComputedFromTheRecordsWithDepartmentAliases(query: String, expected: [Int]) throws {
        let reply = try get("/public/collection/v1/objects?\(query)")
        #expect(reply.status == 200)
        #expect(try ids(reply) == IDList(total: expected.count, objectIDs: expected))
    }

    @Test func theFullListHoldsFixturesAndSyntheticRecords() throws {
        let archive = try FixtureArchive(directory: fixturesDirectory, syntheticCount: 5)
        let list = try ids(get("/public/collection/v1/objects", from: archive))
        #expect(list == IDList(total: allFixtureIDs.count + 4, objectIDs: ([2, 3, 4, 5] + allFixtureIDs).sorted()))
    }

    @Test func withdrawnIDsWinOverSyntheticRecordsAndAreNotListed() throws {
        let archive = try FixtureArchive(directory: fixturesDirectory, syntheticCount: 101_040)
        #expect(
            text(try get("/public/collection/v1/objects/101039", from: archive)) == #"{"message":"Not a valid object"}"#
        )
        #expect(try get("/public/collection/v1/objects/101040", from: archive).status == 200)
        let listed = try #require(try ids(get("/public/collection/v1/objects", from: archive)).objectIDs)
        #expect(listed.contains(101_038) && listed.contains(101_040) && !listed.contains(101_039))
    }

    @Test func anUnknownDepartmentListIsAnEmptyArray() throws {
        let reply = try get("/public/collection/v1/objects?departmentIds=999")
        #expect(reply.status == 200)
        #expect(text(reply) == #"{"total":0,"objectIDs":[]}"#)
    }

    @Test(arguments: ["notadate", "2023-02-30", "2023-1-05", "20230105", "2023-13-01", ""])
    func aMalformedMetadataDateIsABareJSONString(date: String) throws {
        let reply = try get("/public/collection/v1/objects?metadataDate=\(date)")
        #expect(reply.status == 400)
        #expect(text(reply) == #""Date not valid. Dates must be in the format YYYY-MM-DD e.g. 1987-05-03""#)
    }

    @Test func leapDaysAreValidDates() throws {
        #expect(try get("/public/collection/v1/objects?metadataDate=2024-02-29").status == 200)
    }

    @Test(arguments: ["/public/collection/v2/objects", "/", "/public/collection/v1/objects/1/extra/2", "/departments"])
    func otherPathsAreNotFound(path: String) throws {
        let reply = try get(path)
        #expect(reply.status == 404)
        #expect(text(reply).contains("message"))
    }

    @Test func olderSchemasAreIndexedLeniently() throws {
        let old2018 = try JSONDecoder().decode(
            FixtureRecord.Fields.self, from: Data(try fileBytes("public/collection/v1/objects/436535.json")))
        #expect(old2018.tags?.map(\.term) == ["Landscapes", "Cypresses", "Summer"])
        #expect(old2018.galleryNumber == nil)
        let old2020 = try JSONDecoder().decode(
            FixtureRecord.Fields.self, from: Data(try fileBytes("schemas/45734-2020-schema.json")))
        #expect(old2020.title == "Quail and Millet")
        #expect(old2020.tags?.isEmpty == false)
        #expect(old2020.tags?.allSatisfy { $0.term != nil } == true)
    }

    @Test func aDirectoryWithoutTheTreeIsRejected() {
        #expect(throws: FixtureArchiveError.missingTree(directory: fixturesDirectory + "/public")) {
            try FixtureArchive(directory: fixturesDirectory + "/public")
        }
    }
}

extension FixtureArchiveTests {
    @Suite("Fixture archive: search")
    struct Search {
        @Test(arguments: [
            ("q=cypress", [436535, 437980]),
            ("q=CyPrEsS", [436535, 437980]),
            ("q=gogh", [436533, 436535, 437980]),
            ("q=man", [63372, 436286, 1, 45734, 336228, 356497, 437056, 452641, 452655, 454811, 460863, 485938]),
            ("title=true&q=portrait", [436286]),
            ("tags=true&q=portraits", [436286, 437056]),
            ("tags=true&q=landscapes", [436535, 437980]),
            ("artistOrCulture=true&q=japan", [45734, 843269]),
            ("isHighlight=true&q=cypress", [436535]),
            ("isHighlight=True&q=cypress", [436535, 437980]),
            ("isOnView=true&q=gogh", [436533, 437980]),
            ("isOnView=false&q=gogh", [436535]),
            ("departmentId=11&q=man", [436286, 437056]),
            ("departmentId=999&q=cypress", [436535, 437980]),
            ("medium=Bronze&q=the", [203933]),
            ("geoLocation=Iran&q=folio", [452641, 452655]),
            ("dateBegin=1880&dateEnd=1890&q=cypress", [436535, 437980]),
            ("dateBegin=1880&q=cypress", [436535, 437980]),
            ("hasImages=true&q=cypress", [436535, 437980]),
            ("unknownFilter=1&q=cypress", [436535, 437980]),
        ])
        func v1SearchReturnsEveryHitTitleMatchesFirst(query: String, expected: [Int]) throws {
            let reply = try get("/public/collection/v1/search?\(query)")
            #expect(reply.status == 200)
            #expect(reply.contentType == "application/json; charset=UTF-8")
            #expect(try ids(reply) == IDList(total: expected.count, objectIDs: expected))
        }

        @Test(arguments: [
            "q=noresult", "medium=bronze&q=the", "geoLocation=iran&q=folio", "hasImages=false&q=cypress",
            "dateBegin=abc&dateEnd=def&q=cypress", "q=",
        ])
        func v1SearchWithoutHitsAnswersNullIDs(query: String) throws {
            let reply = try get("/public/collection/v1/search?\(query)")
            #expect(reply.status == 200)
            #expect(text(reply) == #"{"total":0,"objectIDs":null}"#)
        }

        @Test func v1SearchWithoutQIsABadGateway() throws {
            #expect(try get("/public/collection/v1/search?isHighlight=true").status == 502)
        }

        @Test func v1_1SearchWithoutQMatchesEverythingAscending() throws {
            let list = try ids(get("/public/collection/v1.1/search"))
            #expect(list == IDList(total: allFixtureIDs.count, objectIDs: allFixtureIDs))
        }

        @Test(arguments: [
            ("isHighlight=true", [336228, 436535, 437056]),
            ("isOnView=true", [1027, 63372, 321412, 436533, 437056, 437980, 544120]),
            ("departmentId=15", [460863]),
            ("medium=Bronze", [198799, 203933]),
            ("medium=Engraving|Woodcut", [336228, 356497]),
            ("geoLocation=Egypt|Ethiopia", [309529, 544120]),
            ("dateBegin=1880&dateEnd=1900", [352204, 436533, 436535, 437980]),
            ("dateEnd=1900&dateBegin=1880&title=true", [352204, 436533, 436535, 437980]),
        ])
        func v1_1SearchAppliesFiltersWithoutQ(query: String, expected: [Int]) throws {
            let list = try ids(get("/public/collection/v1.1/search?\(query)"))
            #expect(list == IDList(total: expected.count, objectIDs: expected))
        }

        @Test(arguments: [
            ("offset=20&limit=10", Array(allFixtureIDs[20...])),
            ("offset=-5&limit=2", Array(allFixtureIDs[0..<2])),
            ("offset=3&limit=0", Array(allFixtureIDs[3...])),
            ("offset=abc&limit=-1", allFixtureIDs),
        ])
        func v1_1SearchPagesByOffsetAndLimit(query: String, expected: [Int]) throws {
            let list = try ids(get("/public/collection/v1.1/search?\(query)"))
            #expect(list == IDList(total: allFixtureIDs.count, objectIDs: expected))
        }

        @Test func aPagePastTheEndHasNullIDsAndTheRealTotal() throws {
            let reply = try get("/public/collection/v1.1/search?offset=25")
            #expect(text(reply) == #"{"total":25,"objectIDs":null}"#)
            let none = try get("/public/collection/v1.1/search?q=noresult")
            #expect(text(none) == #"{"total":0,"objectIDs":null}"#)
        }

        @Test func limitIsCappedAndOnlyTheFirstTenThousandHitsArePageable() throws {
            let archive = try FixtureArchive(directory: fixturesDirectory, syntheticCount: 20_000)
            let total = 20_000 + allFixtureIDs.filter { $0 > 20_000 }.count
            let capped = try ids(get("/public/collection/v1.1/search?limit=1000", from: archive))
            #expect(capped.total == total)
            #expect(capped.objectIDs == Array(1...500))
            let cut = try ids(get("/public/collection/v1.1/search?offset=9900&limit=500", from: archive))
            #expect(cut.objectIDs == Array(9_901...10_000))
            let beyond = try ids(get("/public/collection/v1.1/search?offset=10000", from: archive))
            #expect(beyond == IDList(total: total, objectIDs: nil))
        }
    }
}

extension FixtureArchiveTests {
    @Suite("Fixture archive: synthetic records")
    struct Synthetic {
        private static let archive: FixtureArchive = {
            do {
                return try FixtureArchive(directory: fixturesDirectory, syntheticCount: 400)
            } catch {
                preconditionFailure("cannot load the fixtures: \(error)")
            }
        }()

        /// The 57 keys of a current-schema record, from the real `436533.json`.
        private static func currentSchemaKeys() throws -> Set<String> {
            let object = try JSONSerialization.jsonObject(
                with: Data(try fileBytes("public/collection/v1/objects/436533.json")))
            return Set(try #require(object as? [String: Any]).keys)
        }

        @Test(arguments: [2, 3, 50, 101, 399, 400])
        func aSyntheticRecordIsMetShaped(id: Int) throws {
            let reply = try get("/public/collection/v1/objects/\(id)", from: Self.archive)
            #expect(reply.status == 200)
            #expect(reply.contentType == "application/json; charset=UTF-8")
            #expect((1_500...3_200).contains(reply.body.count))
            let record = try #require(try JSONSerialization.jsonObject(with: Data(reply.body)) as? [String: Any])
            #expect(Set(record.keys) == (try Self.currentSchemaKeys()))
            #expect(record["objectID"] as? Int == id)
            #expect(record["title"] as? String == "Synthetic Study No. \(id)")
            #expect(record["objectURL"] as? String == "https://www.metmuseum.org/art/collection/search/\(id)")
            let isPublicDomain = try #require(record["isPublicDomain"] as? Bool)
            let image = try #require(record["primaryImage"] as? String)
            #expect(isPublicDomain == image.hasPrefix("https://images.metmuseum.org/CRDImages/"))
            #expect(isPublicDomain || (record["additionalImages"] as? [Any])?.isEmpty == true)
        }

        @Test func syntheticRecordsAreByteIdenticalEveryTime() throws {
            let other = try FixtureArchive(directory: fixturesDirectory, syntheticCount: 100_000)
            for id in [2, 77, 314] {
                let first = try get("/public/collection/v1/objects/\(id)", from: Self.archive)
                let again = try get("/public/collection/v1/objects/\(id)", from: Self.archive)
                let elsewhere = try get("/public/collection/v1/objects/\(id)", from: other)
                #expect(first.body == again.body)
                #expect(first.body == elsewhere.body)
            }
        }

        @Test func mostSyntheticRecordsArePublicDomainAndSomeAreNot() throws {
            var publicDomain = 0
            for id in 2...200
            where text(try get("/public/collection/v1/objects/\(id)", from: Self.archive)).contains(
                #""isPublicDomain":true"#)
            {
                publicDomain += 1
            }
            #expect((120...195).contains(publicDomain))
        }

        @Test func fixturesWinOverSyntheticRecordsAndTheRangeEnds() throws {
            let fixture = try get("/public/collection/v1/objects/1", from: Self.archive)
            #expect(fixture.body == (try fileBytes("public/collection/v1/objects/1.json")))
            #expect(try get("/public/collection/v1/objects/401", from: Self.archive).status == 404)
        }

        @Test func searchFindsSyntheticTitles() throws {
            let list = try ids(get("/public/collection/v1/search?q=synthetic+study+no.+12", from: Self.archive))
            #expect(list.objectIDs == [12] + Array(120...129))
        }

        @Test func syntheticRecordsJoinListsByDepartment() throws {
            let list = try ids(get("/public/collection/v1/objects?departmentIds=1", from: Self.archive))
            let listed = try #require(list.objectIDs)
            #expect(listed.contains(1027))
            for id in listed where id <= 400 && id != 1 {
                #expect(
                    text(try get("/public/collection/v1/objects/\(id)", from: Self.archive)).contains(
                        #""department":"The American Wing""#))
            }
        }

        /// The fast synthetic search must agree with indexing each record from its own JSON.
        @Test(arguments: [
            "q=a", "q=oil", "q=portraits", "q=1", "q=19", "q=synthetic", "q=french", "title=true&q=3",
            "tags=true&q=men", "artistOrCulture=true&q=japan", "isHighlight=true&q=e", "isOnView=true",
            "medium=Bronze|Porcelain", "geoLocation=France|Egypt&q=s", "departmentId=15", "dateBegin=1500&dateEnd=1700",
            "hasImages=true&q=ink",
        ])
        func syntheticSearchMatchesTheRecordsJSON(query: String) throws {
            let reply = try get("/public/collection/v1.1/search?limit=500&\(query)", from: Self.archive)
            let found = try ids(reply).objectIDs ?? []

            let parsed = try RequestTarget(parsing: "/search?\(query)")
            let search = FixtureSearch(parsed.query, knownDepartments: Set([1] + Array(3...19) + [21]))
            let departmentIDs = Dictionary(uniqueKeysWithValues: SyntheticCatalog.departments.map { ($0.name, $0.id) })
            var titleMatches: [Int] = []
            var otherMatches: [Int] = []
            for id in 1...400 {
                let body = try get("/public/collection/v1/objects/\(id)", from: Self.archive).body
                let fields = try JSONDecoder().decode(FixtureRecord.Fields.self, from: Data(body))
                let record = FixtureRecord(
                    fields, id: id, departmentID: fields.department.flatMap { departmentIDs[$0] })
                switch search.placement(of: record.attributes, hits: search.hits(in: record.fields)) {
                case .titleMatch: titleMatches.append(id)
                case .otherMatch: otherMatches.append(id)
                case nil: break
                }
            }
            let expected = titleMatches + otherMatches
            #expect(!expected.isEmpty)
            #expect(found.filter { $0 <= 400 } == expected)
        }
    }
}
