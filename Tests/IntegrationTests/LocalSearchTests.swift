import Foundation
import Testing

/// `/search?source=local` through the real binaries: the records themet cached from the fake Met
/// (its fixtures and 2,000 synthetic records) searched in its own index, against the fake Met's
/// own search of the same records.
@Suite("Local search through the real binaries", .serialized)
struct LocalSearchTests {
    static let unpaced = ["--upstream-rate", "1000", "--upstream-burst", "1000", "--upstream-concurrency", "16"]
    static let synthetic = 2_000

    /// A fake Met with the fixtures and `synthetic` records, and a themet that cached them all
    /// (through `/objects?ids=`, 100 at a time) and indexed them.
    static func filled() async throws -> (servers: Servers, ids: [Int]) {
        let servers = try await Servers.start(fake: ["--synthetic", String(synthetic)], themet: unpaced)
        let directory = BuiltProducts.fixtures.appendingPathComponent("public/collection/v1/objects").path
        let fixtures = try FileManager.default.contentsOfDirectory(atPath: directory).compactMap {
            Int($0.replacingOccurrences(of: ".json", with: ""))
        }
        let ids = Array(1...synthetic) + fixtures.filter { $0 > synthetic }.sorted()
        for start in stride(from: 0, to: ids.count, by: 100) {
            let batch = ids[start..<min(ids.count, start + 100)].map(String.init).joined(separator: ",")
            let answer = try await servers.get("/objects?ids=\(batch)&wait=30000")
            #expect(answer.status == 200, "\(String(decoding: answer.body, as: UTF8.self).prefix(300))")
        }
        try await servers.waitUntilIndexed(ids.count)
        return (servers, ids)
    }

    /// Every ID of a local search, page after page of 100 (following `next`), and its total.
    static func localIDs(_ query: String, from servers: Servers) async throws -> (ids: [Int], total: Int) {
        var ids: [Int] = []
        var target: String? = "/search?source=local&hasImages=false&limit=100&\(query)"
        var total = -1
        for _ in 0..<100 {
            guard let path = target else { break }
            let answer = try await servers.get(path)
            #expect(answer.status == 200, "\(path): \(String(decoding: answer.body, as: UTF8.self).prefix(300))")
            let json = try answer.json()
            total = json["total"] as? Int ?? -1
            ids += (json["objects"] as? [[String: Any]] ?? []).compactMap { $0["objectID"] as? Int }
            target = json["next"] as? String
        }
        return (ids, total)
    }

    /// The same search at the fake Met (v1: every ID in one answer; as at the Met, a search by
    /// filters alone needs an empty `q`).
    static func metIDs(_ query: String, from servers: Servers) async throws -> [Int] {
        let query = query.contains("q=") ? query : "q=&" + query
        let answer = try await HTTPClient.request(servers.fake.baseURL + "/public/collection/v1/search?\(query)")
        #expect(answer.status == 200, "\(query): \(String(decoding: answer.body, as: UTF8.self).prefix(300))")
        return try answer.json()["objectIDs"] as? [Int] ?? []
    }

    /// Searches whose words are whole words wherever they occur (the fake Met matches substrings
    /// of the text, local search words and the words they begin: they agree on those).
    static let agreeing = [
        "q=cypress", "q=wheat", "q=velde", "q=porcelain", "q=terracotta", "q=florence",
        "q=safavid", "q=study&title=true", "q=velde&artistOrCulture=true", "q=japan&artistOrCulture=true",
        "q=birds&tags=true", "q=horses&tags=true", "q=study&isHighlight=true", "q=study&isOnView=true",
        "q=porcelain&isOnView=false", "departmentId=11", "departmentId=1", "departmentId=15&q=study",
        "medium=Terracotta%7CBronze", "geoLocation=France", "geoLocation=Italy%7CGhana&q=study",
        "dateBegin=1800&dateEnd=1900", "dateBegin=-700&dateEnd=0&q=study", "q=gogh&departmentId=11",
    ]

    @Test func theSameFiltersFindTheSameRecordsAsTheFakeMetsSearch() async throws {
        let (servers, ids) = try await Self.filled()
        var everything = try await Self.localIDs("", from: servers)
        #expect(everything.total == ids.count && everything.ids.sorted() == ids)
        everything = try await Self.localIDs("sort=-id", from: servers)
        #expect(everything.ids == ids.sorted(by: >))
        for query in Self.agreeing {
            let local = try await Self.localIDs(query, from: servers)
            let met = try await Self.metIDs(query, from: servers)
            #expect(!met.isEmpty, "\(query): the fake Met finds nothing, which proves little")
            #expect(local.ids.sorted() == met.sorted(), "\(query)")
            #expect(local.total == local.ids.count && Set(local.ids).count == local.ids.count, "\(query)")
        }
        // The index was only read: every search above cost the fake Met nothing.
        let before = try await servers.upstreamStats().total
        _ = try await Self.localIDs("q=study&facets=department", from: servers)
        #expect(try await servers.upstreamStats().total == before)
    }

    @Test func facetsAddUpOrdersPageStablyAndAnswersRevalidate() async throws {
        let (servers, _) = try await Self.filled()
        let answer = try await servers.get(
            "/search?source=local&q=study&facets=department,classification,century,isPublicDomain,hasImage")
        #expect(answer.status == 200)
        #expect(answer.header("Cache-Control") == "no-cache")
        #expect(answer.header("Cache-Status") == "TheMet; hit; detail=local")
        let json = try answer.json()
        #expect(json["source"] as? String == "local")
        let total = try #require(json["total"] as? Int)
        #expect(total > 100)
        let facets = try #require(json["facets"] as? [String: [String: Any]])
        #expect(Set(facets.keys) == ["department", "classification", "century", "isPublicDomain", "hasImage"])
        for (name, facet) in facets {
            let values = facet["values"] as? [[String: Any]] ?? []
            #expect(
                values.reduce(0) { $0 + ($1["count"] as? Int ?? 0) } + (facet["others"] as? Int ?? -1) == total,
                "\(name)")
        }
        let departments = facets["department"]?["values"] as? [[String: Any]] ?? []
        #expect(
            departments.contains { $0["value"] as? String == "The American Wing" && $0["departmentId"] as? Int == 1 })
        let centuries = facets["century"]?["values"] as? [[String: Any]] ?? []
        #expect(centuries.allSatisfy { (($0["label"] as? String)?.contains(" century") ?? ($0["value"] is NSNull)) })

        // The same answer again: a 304 for its ETag, gzip when asked for.
        let etag = try #require(answer.header("ETag"))
        let path = "/search?source=local&q=study&facets=department,classification,century,isPublicDomain,hasImage"
        #expect(try await servers.get(path, headers: ["If-None-Match": etag]).status == 304)
        let gzipped = try await servers.get(path, headers: ["Accept-Encoding": "gzip"])
        #expect(gzipped.header("Content-Encoding") == "gzip" && gzipped.header("Vary") == "Accept-Encoding")

        // Every order pages through the whole result once.
        for sort in ["relevance", "id", "-id", "title", "-title", "date", "-date"] {
            let paged = try await Self.localIDs("q=study&sort=\(sort)", from: servers)
            #expect(paged.ids.count == paged.total && Set(paged.ids).count == paged.total, "\(sort)")
        }
        let byDate = try await servers.get("/search?source=local&q=study&sort=date&limit=100").json()
        let begins = (byDate["objects"] as? [[String: Any]] ?? []).compactMap { $0["objectBeginDate"] as? Int }
        #expect(begins == begins.sorted() && begins.count == 100)
    }

    /// A result's pages, followed by their `next` links, come from the result of the first page
    /// while the cache fills beside them; a new search sees what was added.
    @Test func pagesStayOfOneResultWhileTheCacheFills() async throws {
        let servers = try await Servers.start(fake: ["--synthetic", "3000"], themet: Self.unpaced)
        func cache(_ ids: ClosedRange<Int>) async throws {
            for start in stride(from: ids.lowerBound, through: ids.upperBound, by: 100) {
                let batch = (start...min(ids.upperBound, start + 99)).map(String.init).joined(separator: ",")
                #expect(try await servers.get("/objects?ids=\(batch)&wait=30000").status == 200)
            }
        }
        try await cache(1...1_000)
        try await servers.waitUntilIndexed(1_000)
        let first = "/search?source=local&q=study&hasImages=false&limit=50&sort=-id"
        // The fake Met withdraws a few of its synthetic records: what the index holds of the first 1,000.
        let held = try #require(try await servers.get(first).json()["total"] as? Int)
        #expect((990...1_000).contains(held))
        var target: String? = first
        var paged: [Int] = []
        var filling: Task<Void, any Error>?
        for _ in 0..<100 {
            guard let path = target else { break }
            let json = try await servers.get(path).json()
            #expect(json["total"] as? Int == held, "\(path)")
            paged += (json["objects"] as? [[String: Any]] ?? []).compactMap { $0["objectID"] as? Int }
            target = json["next"] as? String
            // The rest of the synthetic records are cached while the pages are read: half the
            // pages are read after the index has changed.
            if filling == nil { filling = Task { try await cache(1_001...3_000) } }
            if paged.count == 500 { try await servers.waitUntilIndexed(held + 100) }
        }
        try await filling?.value
        #expect(paged.count == held && paged == paged.sorted(by: >) && paged.first ?? 0 <= 1_000)
        try await servers.waitUntilIndexed(held + 1_950)
        let fresh = try await servers.get("/search?source=local&q=study&hasImages=false&limit=1").json()
        #expect(fresh["total"] as? Int ?? 0 > held + 1_950)
        #expect(try await servers.get("/search?source=local&q=study&at=x").status == 400)
    }

    @Test func reindexRebuildsTheIndexWhileTheServerRuns() async throws {
        let (servers, ids) = try await Self.filled()
        let before = try await Self.localIDs("q=study&sort=title", from: servers)
        let run = try await ThemetCommand.run(["reindex", "--data-dir", servers.dataDirectory])
        #expect(run.status == 0, "\(run.errorText)")
        let printed = String(decoding: run.output, as: UTF8.self)
        #expect(printed.hasPrefix("indexed \(ids.count) records of \(servers.dataDirectory) in "), "\(printed)")
        #expect(try await Self.localIDs("q=study&sort=title", from: servers) == before)
        let usage = try await ThemetCommand.run(["reindex", "extra"])
        #expect(usage.status == 64, "\(usage.errorText)")
    }

    /// Words a hostile client sends, through the real client's query string: FTS5's syntax,
    /// control characters, symbols without a letter, 240 one-letter words in one, too many words,
    /// more than 500 bytes. Each is a 200 (finding what its letters find, or nothing) or a 400
    /// naming `q`; never a 500, and the server searches as before afterwards.
    @Test(arguments: [
        ("q=stu%00dy", 200), ("q=%3F%3F%3F", 200), ("q=%22study%22", 200), ("q=study%20OR%20nothing", 200),
        ("q=title%3Astudy", 200), ("q=NEAR(study%20no)", 200), ("q=study*", 200), ("q=-study", 200),
        ("q=%F0%9F%8E%A8", 200), ("medium=%21%21%21", 200), ("q=%C3%A9tude%20%0D%0A%09", 200),
        ("q=" + String(repeating: "s.", count: 240), 200),
        ("q=" + String(repeating: "s.", count: 1_500), 400),
        ("q=" + Array(repeating: "s", count: 17).joined(separator: "%20"), 400),
    ])
    func hostileWordsAreAnAnswerOrA400(query: String, status: Int) async throws {
        let servers = try await Servers.start(fake: ["--synthetic", "100"], themet: Self.unpaced)
        let batch = (1...100).map(String.init).joined(separator: ",")
        #expect(try await servers.get("/objects?ids=\(batch)&wait=30000").status == 200)
        try await servers.waitUntilIndexed(90)
        let before = try await servers.get("/search?source=local&q=study&hasImages=false").json()["total"] as? Int
        let answer = try await servers.get("/search?source=local&hasImages=false&" + query)
        #expect(answer.status == status, "\(String(decoding: answer.body, as: UTF8.self).prefix(300))")
        if status == 400 {
            #expect(try answer.json()["parameter"] as? String == "q")
        } else if query.contains("%3F%3F%3F") || query.contains("%F0") || query.contains("%21") {
            #expect(try answer.json()["total"] as? Int == 0)
        }
        #expect(try await servers.get("/search?source=local&q=study&hasImages=false").json()["total"] as? Int == before)
        #expect(before ?? 0 > 0)
    }

    @Test func withoutAPersistentTierThereIsNothingToSearch() async throws {
        let servers = try await Servers.start(themet: ["--disk-cache-size", "0"])
        let answer = try await servers.get("/search?source=local&q=cypress")
        #expect(answer.status == 404)
        #expect(try answer.json()["code"] as? String == "no_persistent_cache")
        #expect(try await servers.get("/search?q=cypress&facets=department").status == 400)
    }
}
