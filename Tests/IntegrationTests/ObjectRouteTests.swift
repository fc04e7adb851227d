import Foundation
import Testing

@Suite("GET /objects/{id} end to end")
struct ObjectRouteTests {
    /// `--object-ttl 0` makes a stored object expired at once, and 5 s of upstream latency makes
    /// the refresh slow enough to be seen running: the expired copy is answered meanwhile, and
    /// the refresh is the only other call the Met gets.
    @Test func anExpiredObjectIsAnsweredAtOnceWhileOneRefreshRuns() async throws {
        // Generous upstream timeouts: on a loaded machine (ThreadSanitizer, parallel suites) a
        // slow connect must not become a retry, which would be a third call the Met counts.
        let servers = try await Servers.start(
            fake: ["--latency", "5000"],
            themet: ["--object-ttl", "0", "--upstream-connect-timeout", "30s", "--upstream-timeout", "60s"])
        let first = try await servers.get("/objects/436535")
        #expect(first.status == 200)
        // All three at once: sent one after another on a loaded machine, the last could come after
        // the refresh ended, find the refreshed copy expired too and rightly start another.
        let stales = try await withThrowingTaskGroup(of: HTTPResult.self) { group in
            for _ in 0..<3 { group.addTask { try await servers.get("/objects/436535") } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        for stale in stales {
            #expect(stale.status == 200)
            #expect(stale.body == first.body)
            #expect(stale.header("Cache-Status")?.hasSuffix("; detail=revalidating") == true)
            #expect(stale.header("Cache-Control")?.contains("stale-while-revalidate=") == true)
        }
        func cache() async throws -> [String: Any] {
            try await servers.get("/health").json()["cache"] as? [String: Any] ?? [:]
        }
        // The refresh is in flight until the Met has answered it, which the fake counts first: on a
        // loaded machine its 5 s may already have passed, and then it is counted.
        let inFlight = try await cache()["inFlight"] as? Int
        let counted = try await servers.upstreamStats().total
        #expect(inFlight == 1 || (inFlight == 0 && counted == 2), "in flight: \(String(describing: inFlight))")
        #expect(try await cache()["revalidating"] as? Int == 3)
        var polls = 0
        while try await cache()["inFlight"] as? Int != 0, polls < 200 {  // 10 s at most
            polls += 1
            try await Task.sleep(for: .milliseconds(50))
        }
        #expect(try await cache()["inFlight"] as? Int == 0)
        let stats = try await servers.upstreamStats()
        #expect(stats.total == 2, "\(stats.paths)")
    }

    @Test func servesTheMetsBytesThenHitsTheCache() async throws {
        let servers = try await Servers.start()
        let fixture = try Data(
            contentsOf: BuiltProducts.fixtures.appendingPathComponent(
                "public/collection/v1/objects/436535.json"))

        let first = try await servers.get("/objects/436535")
        #expect(first.status == 200)
        #expect(first.body == fixture)
        #expect(first.header("Content-Type") == "application/json; charset=utf-8")
        #expect(first.header("Cache-Status")?.contains("fwd=uri-miss") == true)
        #expect(first.header("Cache-Control")?.hasPrefix("max-age=") == true)
        #expect(first.header("Age") != nil)
        #expect(first.header("Set-Cookie") == nil)
        #expect(first.header("Vary")?.contains("Origin") != true)  // the Met's Vary is dropped
        #expect(first.header("Access-Control-Allow-Origin") == "*")
        let etag = try #require(first.header("ETag"))
        #expect(etag.hasPrefix("\""))

        let second = try await servers.get("/objects/436535")
        #expect(second.body == fixture)
        #expect(second.header("Cache-Status")?.contains("hit") == true)
        #expect(second.header("ETag") == etag)

        let notModified = try await servers.get("/objects/436535", headers: ["If-None-Match": etag])
        #expect(notModified.status == 304)
        #expect(notModified.body.isEmpty)

        let head = try await servers.get("/objects/436535", method: "HEAD", headers: ["Accept-Encoding": "identity"])
        #expect(head.status == 200)
        #expect(head.body.isEmpty)
        #expect(head.header("Content-Length") == String(fixture.count))

        let stats = try await servers.upstreamStats()
        #expect(stats.paths["/public/collection/v1/objects/436535"] == 1)
    }

    @Test func gzipForClientsThatAcceptItInflatesToTheIdentityBody() async throws {
        let servers = try await Servers.start()
        let request = "GET /objects/436535 HTTP/1.1\r\nHost: x\r\nAccept-Encoding: gzip\r\nConnection: close\r\n\r\n"
        var compressed: [[UInt8]] = []
        for _ in 0..<2 {  // a miss, then a hit: both compressed
            let raw = try await RawHTTP.exchange(port: servers.themet.port, request: Array(request.utf8))
            let text = raw.text
            #expect(text.hasPrefix("HTTP/1.1 200"))
            #expect(text.contains("Content-Encoding: gzip"))
            #expect(text.contains("Vary: Accept-Encoding"))
            #expect(text.contains("-gzip\""))  // its own ETag
            compressed.append(try raw.body())
        }
        // Keep-alive hits (sent with the head made once for the second) are compressed too.
        let keepAlive = "GET /objects/436535 HTTP/1.1\r\nHost: x\r\nAccept-Encoding: gzip\r\n\r\n"
        let pipelined = try await RawHTTP.exchange(
            port: servers.themet.port, request: Array((keepAlive + keepAlive + request).utf8))
        #expect(pipelined.text.components(separatedBy: "Content-Encoding: gzip\r\n").count == 4)
        let identity = try await servers.get("/objects/436535", headers: ["Accept-Encoding": "identity"])
        #expect(identity.header("Content-Encoding") == nil)
        #expect(
            identity.body
                == (try Data(
                    contentsOf: BuiltProducts.fixtures.appendingPathComponent(
                        "public/collection/v1/objects/436535.json"))))
        for body in compressed {
            #expect(try await Gunzip.inflate(body) == [UInt8](identity.body))
        }
    }

    @Test func projectsFields() async throws {
        let servers = try await Servers.start()
        let result = try await servers.get("/objects/436535?fields=objectID,title,primaryImageSmall")
        #expect(result.status == 200)
        let json = try result.json()
        #expect(Set(json.keys) == ["objectID", "title", "primaryImageSmall"])
        #expect(json["objectID"] as? Int == 436535)
    }

    /// `Last-Modified` through the real client: a record's `metadataDate` (read here by
    /// Foundation's own formatters), on the route and the mirror; a conditional GET with it is a
    /// 304, one a second earlier a 200; a 404 carries the time it was fetched.
    @Test func lastModifiedIsTheRecordsMetadataDateAndAnswersIfModifiedSince() async throws {
        let servers = try await Servers.start(fake: ["--synthetic", "10"])
        let record = try await HTTPClient.request(servers.fake.baseURL + "/public/collection/v1/objects/5").json()
        let metadataDate = try #require(record["metadataDate"] as? String)
        let reader = ISO8601DateFormatter()
        reader.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        let changed = try #require(reader.date(from: metadataDate) ?? ISO8601DateFormatter().date(from: metadataDate))
        let writer = DateFormatter()
        writer.locale = Locale(identifier: "en_US_POSIX")
        writer.timeZone = TimeZone(identifier: "GMT")
        writer.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        let expected = writer.string(from: changed)
        let earlier = writer.string(from: changed.addingTimeInterval(-1))
        for path in ["/objects/5", "/public/collection/v1/objects/5"] {
            let answer = try await servers.get(path)
            #expect(answer.status == 200)
            #expect(answer.header("Last-Modified") == expected, "\(path)")
            let notModified = try await servers.get(path, headers: ["If-Modified-Since": expected])
            #expect(notModified.status == 304 && notModified.body.isEmpty, "\(path)")
            #expect(try await servers.get(path, headers: ["If-Modified-Since": earlier]).status == 200, "\(path)")
        }
        let missing = try await servers.get("/objects/999999999")
        #expect(missing.status == 404)
        let fetched = try #require(missing.header("Last-Modified").flatMap(writer.date(from:)))
        #expect(abs(fetched.timeIntervalSinceNow) < 60)
    }

    @Test func notFoundIsAProblemAndIsCached() async throws {
        let servers = try await Servers.start()
        for _ in 0..<2 {
            let result = try await servers.get("/objects/999999999")
            #expect(result.status == 404)
            #expect(result.header("Content-Type") == "application/problem+json")
            let json = try result.json()
            #expect(json["code"] as? String == "object_not_found")
            #expect((json["detail"] as? String)?.contains("ObjectID not found") == true)
            #expect(result.header("ETag") != nil)
            #expect(result.header("Cache-Status") != nil)
        }
        let stats = try await servers.upstreamStats()
        #expect(stats.paths["/public/collection/v1/objects/999999999"] == 1)
    }

    @Test(arguments: ["abc", "0", "-1", "+1", "1.5", "01", "99999999999"])
    func badIDsAreRejectedWithoutAnUpstreamCall(id: String) async throws {
        let servers = try await Servers.start()
        let result = try await servers.get("/objects/\(id)")
        #expect(result.status == 400)
        #expect(try result.json()["code"] as? String == "invalid_object_id")
        #expect(try await servers.upstreamStats().total == 0)
    }

    @Test func hundredConcurrentMissesMakeOneUpstreamCall() async throws {
        let servers = try await Servers.start(fake: ["--latency", "300"])
        let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<100 {
                group.addTask { try await servers.get("/objects/437980").status }
            }
            return try await group.reduce(into: [Int]()) { $0.append($1) }
        }
        #expect(statuses.count == 100)
        #expect(statuses.allSatisfy { $0 == 200 })
        let stats = try await servers.upstreamStats()
        #expect(stats.paths["/public/collection/v1/objects/437980"] == 1)
        #expect(stats.total == 1)
    }
}
