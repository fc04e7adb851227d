import Foundation
import MetEngine
import TestKit
import Testing

@testable import MetDisk

/// Local search over the persistent tier: what a search finds, in which order and with which
/// counts, and an index that follows the tier through changes, withdrawals, purges, evictions,
/// restarts and a build over a file that held records before it had an index.
@Suite("The persistent tier's search index")
struct SearchIndexTests {
    private static let policy = FreshnessPolicy()

    /// Object `id`'s record with `members` (JSON values), fetched at `storedAt`.
    static func record(_ id: Int, storedAt: Double = 1_000, _ members: [String: Any] = [:]) -> CacheEntry {
        var object = members
        object["objectID"] = id
        let body = [UInt8](try! JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]))
        return CacheEntry(
            key: MetResource.object(id: id).cacheKey, kind: .object, status: 200, body: body, storedAt: storedAt,
            policy: policy, details: EntryDetails.read(body, kind: .object))
    }

    /// A 404 for object `id`.
    static func withdrawn(_ id: Int, storedAt: Double = 2_000) -> CacheEntry {
        CacheEntry(
            key: MetResource.object(id: id).cacheKey, kind: .object, status: 404,
            body: Array(#"{"message":"ObjectID not found"}"#.utf8), storedAt: storedAt, policy: policy,
            message: "ObjectID not found")
    }

    /// Five records that tell the filters apart.
    static let records: [CacheEntry] = [
        record(
            1,
            [
                "title": "Wheat Field with Cypresses", "artistDisplayName": "Vincent van Gogh",
                "department": "European Paintings", "classification": "Paintings", "medium": "Oil on canvas",
                "objectBeginDate": 1889, "objectEndDate": 1889, "isPublicDomain": true,
                "primaryImage": "https://x/1.jpg",
                "tags": [["term": "Landscapes"], ["term": "Cypresses"]], "country": "France",
            ]),
        record(
            2,
            [
                "title": "Cypress Tree", "medium": "Ink on paper", "department": "Asian Art", "culture": "Japan",
                "classification": "Paintings", "objectBeginDate": 1700, "objectEndDate": 1750,
                "constituents": [["name": "Ogata Kōrin"]],
            ]),
        record(
            3,
            [
                "title": "Café Terrace at Night", "artistDisplayName": "Van Gogh", "department": "European Paintings",
                "objectBeginDate": 1888, "objectEndDate": 1888, "primaryImageSmall": "https://x/3.jpg",
            ]),
        record(
            4,
            [
                "title": "Portrait of a Woman", "artistDisplayName": "Renoir", "isHighlight": true,
                "GalleryNumber": "800",
                "department": "European Paintings", "objectBeginDate": -500, "objectEndDate": -480,
            ]),
        record(5, ["title": "", "department": 7, "tags": ["Bare term"], "accessionNumber": "29.100.5"]),
    ]

    private static func open(_ directory: TemporaryDirectory, capacity: Int = 1 << 30) throws -> DiskCache {
        let disk = try DiskCacheTests.open(directory, capacity: capacity)
        for record in records { disk.store(record) }
        disk.flush()
        return disk
    }

    /// The IDs `search` finds, in order (the whole result, one page).
    private static func ids(_ disk: DiskCache, _ configure: (inout LocalSearch) -> Void) throws -> [Int] {
        var search = LocalSearch()
        search.limit = 100
        configure(&search)
        let page = try #require(try disk.search(search))
        #expect(page.total == page.ids.count)
        return page.ids
    }

    @Test func wordsFindWholeWordsAndTheWordsTheyBeginCaseAndDiacriticsAside() throws {
        let directory = TemporaryDirectory()
        let disk = try Self.open(directory)
        defer { disk.close() }
        #expect(
            try Self.ids(disk) {
                $0.words = ["cypress"]
                $0.order = .id
            } == [1, 2])
        #expect(try Self.ids(disk) { $0.words = ["CAFE"] } == [3])
        #expect(try Self.ids(disk) { $0.words = ["korin"] } == [2])
        #expect(
            try Self.ids(disk) {
                $0.words = ["van", "gogh"]
                $0.order = .id
            } == [1, 3])
        #expect(try Self.ids(disk) { $0.words = ["gogh", "night"] } == [3])
        #expect(try Self.ids(disk) { $0.words = ["bare"] } == [5])
        #expect(try Self.ids(disk) { $0.words = ["29.100.5"] } == [5])
        // Narrowed to columns: the title's, the tags', the artist's (with culture).
        #expect(
            try Self.ids(disk) {
                $0.words = ["van"]
                $0.columns = ["title"]
            } == [])
        #expect(
            try Self.ids(disk) {
                $0.words = ["landscapes"]
                $0.columns = ["tags"]
            } == [1])
        #expect(
            try Self.ids(disk) {
                $0.words = ["japan"]
                $0.columns = ["artist"]
            } == [2])
        // What no tokenizer reads as a word is no condition; quotes are taken as text.
        #expect(try Self.ids(disk) { $0.words = ["--", "cafe"] } == [3])
        #expect(try Self.ids(disk) { $0.words = [#""café"#, #"ter"race"#] } == [])
        #expect(try Self.ids(disk) { $0.words = ["AND", "OR", "NOT", "NEAR(", "*"] } == [])
        // Words without a letter or digit find nothing (not everything); a control character
        // separates words; a short word matches whole words only.
        #expect(try Self.ids(disk) { $0.words = ["???", "--"] } == [])
        #expect(try Self.ids(disk) { $0.words = ["cafe\u{0}terrace"] } == [3])
        #expect(try Self.ids(disk) { $0.words = ["po"] } == [])
        #expect(
            try Self.ids(disk) {
                $0.words = ["of"]
                $0.order = .id
            } == [4])
    }

    @Test func theMetsFiltersNarrowAndWithoutWordsEverythingIsSearched() throws {
        let directory = TemporaryDirectory()
        let disk = try Self.open(directory)
        defer { disk.close() }
        #expect(try Self.ids(disk) { _ in } == [1, 2, 3, 4, 5])
        #expect(try Self.ids(disk) { $0.mediumTerms = ["Ink", "Bronze"] } == [2])
        #expect(try Self.ids(disk) { $0.mediumTerms = ["!!!"] } == [])
        #expect(try Self.ids(disk) { $0.placeTerms = ["France"] } == [1])
        #expect(try Self.ids(disk) { $0.isHighlight = true } == [4])
        #expect(try Self.ids(disk) { $0.isOnView = true } == [4])
        #expect(try Self.ids(disk) { $0.isOnView = false } == [1, 2, 3, 5])
        #expect(try Self.ids(disk) { $0.hasImage = true } == [1, 3])
        #expect(try Self.ids(disk) { $0.isPublicDomain = true } == [1])
        #expect(try Self.ids(disk) { $0.departments = ["Asian Art", "Islamic Art"] } == [2])
        #expect(try Self.ids(disk) { $0.departments = [] } == [])
        #expect(
            try Self.ids(disk) {
                $0.classifications = ["Paintings"]
                $0.words = ["cypress"]
                $0.order = .id
            } == [1, 2])
        #expect(
            try Self.ids(disk) {
                $0.dateBegin = 1800
                $0.dateEnd = 1900
            } == [1, 3])
        #expect(
            try Self.ids(disk) {
                $0.dateBegin = -600
                $0.dateEnd = 1750
            } == [2, 4])
    }

    @Test func everyOrderIsTotalAndPagesCoverTheResultOnce() throws {
        let directory = TemporaryDirectory()
        let disk = try Self.open(directory)
        defer { disk.close() }
        #expect(try Self.ids(disk) { $0.order = .idDescending } == [5, 4, 3, 2, 1])
        #expect(try Self.ids(disk) { $0.order = .title } == [3, 2, 4, 1, 5])
        #expect(try Self.ids(disk) { $0.order = .titleDescending } == [1, 4, 2, 3, 5])
        #expect(try Self.ids(disk) { $0.order = .date } == [4, 2, 3, 1, 5])
        #expect(try Self.ids(disk) { $0.order = .dateDescending } == [1, 3, 2, 4, 5])
        // A title match weighs more than an artist's or a tag's.
        #expect(try Self.ids(disk) { $0.words = ["cypresses"] }.first == 1)
        for order in LocalSearch.Order.allCases {
            let whole = try Self.ids(disk) { $0.order = order }
            var paged: [Int] = []
            for offset in stride(from: 0, to: 6, by: 2) {
                var search = LocalSearch()
                (search.order, search.offset, search.limit) = (order, offset, 2)
                let page = try #require(try disk.search(search))
                #expect(page.total == 5)
                paged += page.ids
            }
            #expect(paged == whole, "\(order)")
        }
    }

    /// Relevance: the weights of the columns that hold a word add up (a title most, then tags and
    /// artist, medium and place, the rest), a column counting once; with several words, a rarer
    /// word counts more (its idf); `columns` (title=true) counts those columns alone.
    @Test func relevanceWeighsTheColumnsThatHoldEachWordAndRarerWordsMore() throws {
        let directory = TemporaryDirectory()
        let disk = try DiskCacheTests.open(directory)
        defer { disk.close() }
        let records = [
            Self.record(11, ["creditLine": "Gift of a heron heron heron lover"]),
            Self.record(12, ["medium": "Heron feathers"]),
            Self.record(13, ["artistDisplayName": "Heron"]),
            Self.record(14, ["title": "Heron"]),
            Self.record(15, ["title": "Heron", "artistDisplayName": "Heron Studio"]),
            Self.record(16, ["tags": ["Heron"]]),
            // Both hold both words; the rarer word is in 21's title, the commoner in 20's.
            Self.record(20, ["title": "Common pond", "creditLine": "kingfisher"]),
            Self.record(21, ["title": "Kingfisher", "creditLine": "common pond"]),
        ]
        for record in records { disk.store(record) }
        for id in 30..<60 { disk.store(Self.record(id, ["title": "Common \(id)"])) }
        disk.flush()
        #expect(try Self.ids(disk) { $0.words = ["heron"] } == [15, 14, 13, 16, 12, 11])
        #expect(try Self.ids(disk) { $0.words = ["kingfisher", "common"] } == [21, 20])
        #expect(
            try Self.ids(disk) {
                $0.words = ["heron"]
                $0.columns = ["artist"]
            } == [13, 15])
        // Another order reads no score: IDs as asked.
        #expect(
            try Self.ids(disk) {
                $0.words = ["heron"]
                $0.order = .idDescending
            } == [16, 15, 14, 13, 12, 11])
    }

    @Test func facetsCountEveryMatchOnce() throws {
        let directory = TemporaryDirectory()
        let disk = try Self.open(directory)
        defer { disk.close() }
        var search = LocalSearch()
        search.facets = SearchFacet.allCases
        let page = try #require(try disk.search(search))
        #expect(page.total == 5 && page.indexed == 5)
        for facet in SearchFacet.allCases {
            let counts = try #require(page.facets[facet])
            #expect(counts.values.reduce(0) { $0 + $1.count } + counts.others == page.total, "\(facet)")
        }
        // Most frequent first, then by value (none first).
        #expect(
            page.facets[.department]?.values == [
                FacetCount(value: .text("European Paintings"), count: 3), FacetCount(value: .none, count: 1),
                FacetCount(value: .text("Asian Art"), count: 1),
            ])
        #expect(
            page.facets[.century]?.values == [
                FacetCount(value: .integer(19), count: 2), FacetCount(value: .none, count: 1),
                FacetCount(value: .integer(-5), count: 1), FacetCount(value: .integer(17), count: 1),
            ])
        #expect(
            page.facets[.hasImage]?.values == [
                FacetCount(value: .bool(false), count: 3), FacetCount(value: .bool(true), count: 2),
            ])
        search.words = ["cypress"]
        let narrowed = try #require(try disk.search(search))
        #expect(narrowed.facets[.classification]?.values == [FacetCount(value: .text("Paintings"), count: 2)])
        #expect(narrowed.indexed == 5)
    }

    @Test func theIndexFollowsChangesWithdrawalsPurgesAndRestarts() throws {
        let directory = TemporaryDirectory()
        var disk = try Self.open(directory)
        // Changed: the new words are found, the old ones no longer.
        disk.store(Self.record(2, storedAt: 1_500, ["title": "Pine Tree", "department": "Asian Art"]))
        // Withdrawn, and purged.
        disk.store(Self.withdrawn(3))
        _ = disk.remove(MetResource.object(id: 4).cacheKey)
        // Not an object: not indexed.
        disk.store(
            CacheEntry(
                key: "/public/collection/v1/search?q=pine", kind: .search, status: 200,
                body: Array(#"{"total":1,"objectIDs":[2]}"#.utf8), storedAt: 5, policy: Self.policy))
        disk.flush()
        #expect(try Self.ids(disk) { $0.words = ["cypress"] } == [1])
        #expect(try Self.ids(disk) { $0.words = ["pine"] } == [2])
        #expect(try Self.ids(disk) { $0.order = .id } == [1, 2, 5])
        disk.close()

        disk = try DiskCacheTests.open(directory)
        defer { disk.close() }
        #expect(try Self.ids(disk) { $0.order = .id } == [1, 2, 5])
        #expect(try Self.ids(disk) { $0.departments = ["Asian Art"] } == [2])
    }

    /// The facts a search reads from memory follow the file: what this tier's writer changes, and
    /// what another process's writer (another tier on the same directory) changes.
    @Test func theFactsInMemoryFollowThisWriterAndAnother() throws {
        let directory = TemporaryDirectory()
        let server = try Self.open(directory)
        defer { server.close() }
        let other = try DiskCacheTests.open(directory)
        defer { other.close() }
        #expect(try Self.ids(server) { $0.departments = ["Asian Art"] } == [2])
        #expect(try Self.ids(other) { $0.departments = ["Asian Art"] } == [2])
        // This writer: its copy is brought along; the other tier's is loaded again.
        server.store(Self.record(6, ["title": "Ewer", "department": "Asian Art", "isHighlight": true]))
        server.flush()
        #expect(try Self.ids(server) { $0.departments = ["Asian Art"] } == [2, 6])
        #expect(
            try Self.ids(other) {
                $0.departments = ["Asian Art"]
                $0.isHighlight = true
            } == [6])
        // The other writer: a change and a withdrawal.
        other.store(Self.record(6, storedAt: 1_500, ["title": "Ewer", "department": "Islamic Art"]))
        other.store(Self.withdrawn(2))
        other.flush()
        #expect(try Self.ids(server) { $0.departments = ["Asian Art"] } == [])
        var search = LocalSearch()
        search.facets = [.department]
        let page = try #require(try server.search(search))
        #expect(page.indexed == 5 && page.total == 5)
        #expect(page.facets[.department]?.values.first == FacetCount(value: .text("European Paintings"), count: 3))
        #expect(try Self.ids(other) { $0.departments = ["Islamic Art"] } == [6])
    }

    /// Results kept for their pages and repeats, by version of the index (a client paging through
    /// one asks for its version), the oldest going first past the bound.
    @Test func resultsAreKeptByVersionWithinABound() {
        let cache = SearchResultCache()
        var search = LocalSearch()
        search.words = ["a"]
        // About a quarter of the bound each (a result also counts for its key).
        let size = SearchResultCache.maxIDs / 4 - 100
        let result = SearchResultCache.Result(ids: Array(1...size), facets: [:], indexed: 9)
        cache.keep(result, of: search, at: 2)
        search.offset = 40
        search.version = 2
        #expect(cache.result(of: search, at: 2)?.ids.count == size)
        #expect(cache.result(of: search, at: 3) == nil)
        for word in ["b", "c", "d", "e"] {
            var other = LocalSearch()
            other.words = [word]
            cache.keep(result, of: other, at: 2)
        }
        #expect(cache.result(of: search, at: 2) == nil)
        var last = LocalSearch()
        last.words = ["e"]
        #expect(cache.result(of: last, at: 2) != nil)
        // A newer version's result beside an older one's.
        cache.keep(.init(ids: [7], facets: [:], indexed: 1), of: search, at: 3)
        #expect(cache.result(of: search, at: 3)?.ids == [7] && cache.result(of: last, at: 2) != nil)
        // Too large a result to keep.
        cache.keep(.init(ids: Array(0...(SearchResultCache.maxIDs / 4)), facets: [:], indexed: 1), of: last, at: 3)
        #expect(cache.result(of: last, at: 3) == nil)
    }

    @Test func evictedRecordsLeaveTheIndex() throws {
        let directory = TemporaryDirectory()
        // Room for about ten of these records.
        let disk = try DiskCacheTests.open(directory, capacity: 12_000)
        defer { disk.close() }
        let text = String(repeating: "word ", count: 200)
        for id in 1...30 {
            disk.store(Self.record(id, ["title": "Evictable \(id)", "medium": text]))
            disk.flush()
        }
        let held = try Self.ids(disk) {
            $0.words = ["evictable"]
            $0.order = .id
        }
        #expect(!held.isEmpty && held.count < 30)
        #expect(held == held.filter { disk.entry(for: MetResource.object(id: $0).cacheKey) != nil })
        #expect(held.last == 30)
    }

    @Test func aFileStoredWithoutTheIndexIsIndexedInTheBackgroundAndReindexRebuildsIt() throws {
        let directory = TemporaryDirectory()
        let count = SearchIndex.buildStep * 2 + 17
        var disk = try DiskCacheTests.open(directory)
        for id in 1...count { disk.store(Self.record(id, ["title": "Record \(id)", "department": "Asian Art"])) }
        disk.flush()
        disk.close()
        // What an earlier build leaves: records, no index.
        let file = try SQLiteConnection(path: directory.path + "/cache.sqlite", create: false)
        for table in SearchIndex.tableNames { try file.execute("DROP TABLE \(table)") }

        disk = try DiskCacheTests.open(directory)
        defer { disk.close() }
        disk.waitForSearchIndex()
        var words = LocalSearch()
        words.words = ["record"]
        #expect(try disk.search(words)?.total == count)
        #expect(try disk.objectRecordCount() == count)

        // Rebuilt from nothing: the same result, and every row read.
        var reported: [Int] = []
        try disk.rebuildSearchIndex(interval: 0.01) { reported.append($0) }
        #expect(reported.last == count)
        #expect(reported == reported.sorted())
        var search = LocalSearch()
        search.facets = [.department]
        let page = try #require(try disk.search(search))
        #expect(page.total == count && page.indexed == count)
        #expect(page.facets[.department]?.values == [FacetCount(value: .text("Asian Art"), count: count)])
    }
}
