import Foundation
import Testing

@Suite("GET /search end to end")
struct SearchRouteTests {
    /// themet flags that keep the pacer out of the way when a test fetches many objects.
    private static let unpaced = [
        "--upstream-rate", "1000", "--upstream-burst", "1000", "--upstream-concurrency", "64",
    ]
    private static let v1Search = "/public/collection/v1/search"
    private static let v11Search = "/public/collection/v1.1/search"

    /// The object IDs of a `/search` page.
    private func ids(_ result: HTTPResult) throws -> [Int] {
        let objects = try #require(try result.json()["objects"] as? [[String: Any]], "no objects list")
        return objects.compactMap { $0["objectID"] as? Int }
    }

    @Test func searchesTheFixturesEndToEnd() async throws {
        let servers = try await Servers.start(themet: Self.unpaced)
        let result = try await servers.get("/search?q=cypress")
        #expect(result.status == 200)
        #expect(result.header("Content-Type") == "application/json; charset=utf-8")
        let json = try result.json()
        #expect(try ids(result) == [436_535, 437_980])
        #expect(json["total"] as? Int == 2)
        #expect(json["missing"] as? [Int] == [])
        #expect(json["withoutImage"] as? [Int] == [])
        #expect(json["pending"] as? [Int] == [])
        #expect(json["next"] is NSNull)
        #expect((json["query"] as? [String: Any])?["hasImages"] as? Bool == true)
        let records = try #require(json["objects"] as? [[String: Any]])
        #expect(records.first?["title"] as? String == "Wheat Field with Cypresses")
        #expect(records.first?["artistDisplayName"] as? String == "Vincent van Gogh")

        let projected = try await servers.get("/search?q=cypress&fields=objectID,title")
        let slim = try #require(try projected.json()["objects"] as? [[String: Any]])
        #expect(slim.map { Set($0.keys) } == [["objectID", "title"], ["objectID", "title"]])
        #expect(try ids(try await servers.get("/search?q=cypress&sort=-id")) == [437_980, 436_535])
        #expect(try ids(try await servers.get("/search?q=cypress&sort=title")) == [437_980, 436_535])
        #expect(try ids(try await servers.get("/search?q=cypress&sort=-title")) == [436_535, 437_980])

        // One search page and one call per object, whatever the sort or projection.
        let stats = try await servers.upstreamStats()
        #expect(stats.paths[Self.v11Search] == 1)
        #expect(stats.paths["/public/collection/v1/objects/436535"] == 1)
        #expect(stats.paths["/public/collection/v1/objects/437980"] == 1)
        #expect(stats.total == 3)
    }

    @Test func aGzipSearchPageInflatesToTheIdentityPageOnAMissAndOnAHit() async throws {
        let servers = try await Servers.start(themet: Self.unpaced)
        let target = "/search?q=cypress&store=false"
        let request = "GET \(target) HTTP/1.1\r\nHost: x\r\nAccept-Encoding: gzip\r\nConnection: close\r\n\r\n"
        let miss = try await RawHTTP.exchange(port: servers.themet.port, request: Array(request.utf8))
        let hit = try await RawHTTP.exchange(port: servers.themet.port, request: Array(request.utf8))
        let identity = try await servers.get(target, headers: ["Accept-Encoding": "identity"])
        #expect(identity.header("Content-Encoding") == nil)
        #expect(identity.header("Vary") == "Accept-Encoding")
        for (raw, outcome) in [(miss, "fwd=uri-miss"), (hit, "hit")] {
            #expect(raw.text.hasPrefix("HTTP/1.1 200"))
            #expect(raw.text.contains("Content-Encoding: gzip\r\n"))
            #expect(raw.text.contains(outcome))
            #expect(try await Gunzip.inflate(try raw.body()) == [UInt8](identity.body))
        }
    }

    @Test func aRecordWithoutAnImageIsListedAsSuch() async throws {
        let servers = try await Servers.start(themet: Self.unpaced)
        let json = try await servers.get("/search?q=liberty").json()
        #expect(json["withoutImage"] as? [Int] == [1])
        #expect((json["objects"] as? [Any])?.isEmpty == true)
    }

    @Test func badParametersAreA400WithoutAnUpstreamCall() async throws {
        let servers = try await Servers.start()
        for target in ["/search", "/search?q=cypress&limit=101", "/search?q=cypress&colour=red"] {
            let result = try await servers.get(target)
            #expect(result.status == 400)
            #expect(result.header("Content-Type") == "application/problem+json")
        }
        #expect(try await servers.upstreamStats().total == 0)
    }

    @Test func twoConcurrentSearchesCostOneSearchAndOneCallPerObjectAndARepeatCostsNothing() async throws {
        let servers = try await Servers.start(fake: ["--latency", "200"], themet: Self.unpaced)
        async let first = servers.get("/search?q=cypress")
        async let second = servers.get("/search?q=cypress")
        let results = try await [first, second]
        for result in results {
            #expect(result.status == 200)
            #expect(try ids(result) == [436_535, 437_980])
        }
        let stats = try await servers.upstreamStats()
        #expect(stats.paths[Self.v11Search] == 1)
        #expect(stats.paths["/public/collection/v1/objects/436535"] == 1)
        #expect(stats.paths["/public/collection/v1/objects/437980"] == 1)
        #expect(stats.total == 3)

        let repeated = try await servers.get("/search?q=cypress")
        #expect(repeated.status == 200)
        #expect(repeated.header("Cache-Status")?.contains("hit") == true)
        #expect(repeated.body == results[0].body)
        let etag = try #require(repeated.header("ETag"))
        #expect(try await servers.get("/search?q=cypress", headers: ["If-None-Match": etag]).status == 304)
        #expect(try await servers.upstreamStats().total == 3)
    }

    @Test func theMirrorSearchPathsAnswerTheMetsBytes() async throws {
        let servers = try await Servers.start(themet: Self.unpaced)
        let v1 = try await servers.get(Self.v1Search + "?q=cypress&hasImages=true")
        #expect(v1.status == 200)
        let v11 = try await servers.get(Self.v11Search + "?hasImages=true&q=cypress&limit=500&offset=0")
        #expect(v11.status == 200)
        // Equivalent queries share the entries; /search reads the same v1.1 page.
        #expect(try await servers.get(Self.v1Search + "?hasImages=true&q=cypress").body == v1.body)
        #expect(try await servers.get("/search?q=cypress").status == 200)
        let stats = try await servers.upstreamStats()
        #expect(stats.paths[Self.v1Search] == 1)
        #expect(stats.paths[Self.v11Search] == 1)

        let direct = try await HTTPClient.request(servers.fake.baseURL + Self.v1Search + "?hasImages=true&q=cypress")
        #expect(v1.body == direct.body)
        #expect(v1.body == Data(#"{"total":2,"objectIDs":[436535,437980]}"#.utf8))
        let directPage = try await HTTPClient.request(
            servers.fake.baseURL + Self.v11Search + "?hasImages=true&limit=500&offset=0&q=cypress")
        #expect(v11.body == directPage.body)
    }

    @Test func autoFallsBackToV1WhenTheMetHasNoV11() async throws {
        let servers = try await Servers.start(fake: ["--search-api", "v1"], themet: Self.unpaced)
        let result = try await servers.get("/search?q=cypress")
        #expect(result.status == 200)
        #expect(try ids(result) == [436_535, 437_980])
        var stats = try await servers.upstreamStats()
        #expect(stats.paths[Self.v11Search] == 1)
        #expect(stats.paths[Self.v1Search] == 1)

        // Remembered: the next search goes straight to v1.
        #expect(try await servers.get("/search?q=wheat").status == 200)
        stats = try await servers.upstreamStats()
        #expect(stats.paths[Self.v11Search] == 1)
        #expect(stats.paths[Self.v1Search] == 2)
    }

    @Test func aRetiredV1IsA502WhenFixedAndNotUsedInAuto() async throws {
        let fixed = try await Servers.start(
            fake: ["--search-api", "v1.1"], themet: Self.unpaced + ["--search-api", "v1"])
        let refused = try await fixed.get("/search?q=cypress")
        #expect(refused.status == 502)
        #expect(refused.header("Content-Type") == "application/problem+json")
        #expect(try refused.json()["code"] as? String == "upstream_error")
        var stats = try await fixed.upstreamStats()
        #expect(stats.paths[Self.v1Search] == 1)
        #expect(stats.paths[Self.v11Search] == nil)

        let auto = try await Servers.start(fake: ["--search-api", "v1.1"], themet: Self.unpaced)
        let result = try await auto.get("/search?q=cypress")
        #expect(result.status == 200)
        #expect(try ids(result) == [436_535, 437_980])
        stats = try await auto.upstreamStats()
        #expect(stats.paths[Self.v1Search] == nil)
        #expect(stats.paths[Self.v11Search] == 1)
    }

    @Test func theCommandLinePrintsASearch() async throws {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("themet-search-cli-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let run = try await ThemetCommand.run([
            "search", "cypress", "--upstream", BuiltProducts.fixtures.path, "--data-dir", directory, "--limit", "3",
        ])
        #expect(run.status == 0, "standard error: \(run.errorText)")
        let json = try #require(try JSONSerialization.jsonObject(with: run.output) as? [String: Any])
        let objects = try #require(json["objects"] as? [[String: Any]])
        #expect(objects.compactMap { $0["objectID"] as? Int } == [436_535, 437_980])
        #expect(json["limit"] as? Int == 3)
        #expect(json["pending"] as? [Int] == [])
        // The search became the latest results.
        let stored = try #require(FileManager.default.contents(atPath: directory + "/objects.json"))
        #expect((try JSONSerialization.jsonObject(with: stored) as? [Any])?.count == 2)
    }

    @Test func theCommandLineWithoutAQueryIsAUsageError() async throws {
        let run = try await ThemetCommand.run(["search", "--limit", "3"])
        #expect(run.status == 64)
        #expect(run.errorText.contains("QUERY"))
        #expect(run.output.isEmpty)
    }

    /// The shared store's counters from `/health`.
    private func storeCounts(_ servers: Servers) async throws -> (records: Int, replacements: Int, writes: Int) {
        let store = try #require(try await servers.get("/health").json()["store"] as? [String: Any])
        return (store["records"] as? Int ?? -1, store["replacements"] as? Int ?? -1, store["writes"] as? Int ?? -1)
    }

    @Test func onlyAFirstPageGETWithoutStoreFalseReplacesTheLatestResults() async throws {
        let servers = try await Servers.start(themet: Self.unpaced)
        for (method, target) in [
            ("HEAD", "/search?q=cypress"), ("GET", "/search?q=cypress&store=false"),
            ("GET", "/search?q=cypress&offset=1"), ("HEAD", "/widget/timeline?q=cypress"),
            ("GET", "/widget/timeline?q=cypress&store=false"),
        ] {
            #expect(try await servers.get(target, method: method).status == 200, "\(method) \(target)")
        }
        #expect(try await storeCounts(servers).records == 0)
        for hostile in ["maybe", "TRUEE", "%00", "true%26q%3Dx", ""] {
            let result = try await servers.get("/search?q=cypress&store=\(hostile)")
            #expect(result.status == 400, "store=\(hostile)")
            #expect(try result.json()["parameter"] as? String == "store")
        }
        #expect(try await servers.get("/search?q=cypress").status == 200)
        var counts = try await storeCounts(servers)
        for _ in 0..<50 where counts.writes < 1 {  // the file is written off the loops: 5 s at most
            try await Task.sleep(for: .milliseconds(100))
            counts = try await storeCounts(servers)
        }
        #expect(counts.records == 2)
        #expect(counts.writes == 1)
        #expect(try await servers.get("/search?q=cypress").status == 200)  // a hit of the same search
        // The store decides within the request whether to replace (and so write): a write the
        // hit asked for would show as a replacement at once, before the file is written.
        let afterHit = try await storeCounts(servers)
        #expect(afterHit.replacements == 1)
        #expect(afterHit.writes == 1)
    }
}
