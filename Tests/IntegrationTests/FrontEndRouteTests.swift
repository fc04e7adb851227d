import Foundation
import Testing

/// The routes front ends ask for, and the explorer, through the built binaries: themet's libcurl
/// client against met-fixture-server over real HTTP on loopback.
@Suite("GET /, /objects?ids=, /random and /iiif end to end")
struct FrontEndRouteTests {
    /// themet flags that keep the pacer out of the way of a test that fetches many objects.
    private static let unpaced = [
        "--upstream-rate", "1000", "--upstream-burst", "1000", "--upstream-concurrency", "64",
    ]

    /// The status line and `Location` of one raw exchange (no redirect followed).
    private static func head(_ target: String, port: Int) async throws -> (status: Int, location: String?) {
        let request = "GET \(target) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
        let text = try await RawHTTP.exchange(port: port, request: Array(request.utf8)).text
        let lines = text.components(separatedBy: "\r\n")
        let status = lines.first.flatMap { Int($0.split(separator: " ").dropFirst().first ?? "") } ?? -1
        let location = lines.first { $0.lowercased().hasPrefix("location:") }
            .map { String($0.dropFirst("location:".count)).trimmingCharacters(in: .whitespaces) }
        return (status, location)
    }

    /// 100 IDs (90 synthetic records, the two withdrawn ones and eight that never existed), asked
    /// for by three overlapping batches at once against a Met that takes 200 ms an answer: every
    /// record in the order asked, the 404s in `missing`, and each ID asked of the Met once.
    @Test func batchesFetchEachIDOnceAndKeepTheOrderAsked() async throws {
        let servers = try await Servers.start(
            fake: ["--synthetic", "2000", "--latency", "200"], themet: Self.unpaced)
        let records = Array(1_001...1_090)
        let absent = [101_039, 855_340] + (1...8).map { 90_000_000 + $0 }
        let ids = (records + absent).shuffled()
        let batches = [ids, Array(ids[20..<80]).reversed(), Array(ids[50...])]
        let results = try await withThrowingTaskGroup(of: (Int, HTTPResult).self) { group in
            for (index, batch) in batches.enumerated() {
                group.addTask {
                    let list = batch.map(String.init).joined(separator: ",")
                    return (index, try await servers.get("/objects?ids=\(list)&wait=30000"))
                }
            }
            var results: [Int: HTTPResult] = [:]
            for try await (index, result) in group { results[index] = result }
            return results
        }
        for (index, batch) in batches.enumerated() {
            let result = try #require(results[index])
            #expect(result.status == 200)
            let body = try result.json()
            let objects = try #require(body["objects"] as? [[String: Any]])
            #expect(objects.compactMap { $0["objectID"] as? Int } == batch.filter { !absent.contains($0) })
            #expect(body["missing"] as? [Int] == batch.filter { absent.contains($0) })
            #expect(body["pending"] as? [Int] == [])
        }
        let stats = try await servers.upstreamStats()
        let objectCalls = stats.paths.filter { $0.key.hasPrefix("/public/collection/v1/objects/") }
        #expect(objectCalls.count == 100)
        #expect(objectCalls.values.allSatisfy { $0 == 1 }, "\(objectCalls.filter { $0.value != 1 })")
    }

    @Test func randomDrawsAreObjectsWithImagesAndTheRedirectLeadsToOne() async throws {
        let servers = try await Servers.start(fake: ["--synthetic", "2000"], themet: Self.unpaced)
        let list = try await HTTPClient.request(servers.fake.baseURL + "/public/collection/v1/objects?departmentIds=11")
        let department = Set(try #require(try list.json()["objectIDs"] as? [Int]))
        var drawn = Set<Int>()
        for _ in 0..<30 {
            let result = try await servers.get("/random?format=json&departmentId=11")
            #expect(result.status == 200)
            let body = try result.json()
            let id = try #require(body["objectID"] as? Int)
            drawn.insert(id)
            #expect(department.contains(id))
            let record = try await servers.get("/objects/\(id)").json()
            #expect((record["primaryImageSmall"] as? String)?.hasPrefix("https://images.metmuseum.org/") == true)
        }
        #expect(drawn.count > 1)
        let redirect = try await Self.head("/random?isPublicDomain=true", port: servers.themet.port)
        #expect(redirect.status == 302)
        let location = try #require(redirect.location)
        #expect(location.hasPrefix("/objects/"))
        let record = try await servers.get(location).json()
        #expect(record["isPublicDomain"] as? Bool == true)
    }

    @Test func aManifestForAPublicDomainObjectAndA404ForTheRest() async throws {
        let servers = try await Servers.start(themet: Self.unpaced)
        let manifest = try await servers.get("/iiif/437980/manifest.json")
        #expect(manifest.status == 200)
        #expect(manifest.header("Content-Type")?.hasPrefix("application/ld+json") == true)
        let body = try manifest.json()
        #expect(body["id"] as? String == "\(servers.themet.baseURL)/iiif/437980/manifest.json")
        let canvases = try #require(body["items"] as? [[String: Any]])
        #expect(!canvases.isEmpty)
        let refused = try await servers.get("/iiif/1/manifest.json")
        #expect(refused.status == 404)
        #expect(try refused.json()["code"] as? String == "not_public_domain")
        #expect(try await servers.get("/iiif/999999999/manifest.json").status == 404)
    }

    /// One raw exchange: status, head and body (the head's fields as sent).
    private static func raw(_ request: String, port: Int) async throws -> (status: Int, head: String, body: String) {
        let text = try await RawHTTP.exchange(port: port, request: Array(request.utf8)).text
        let end = text.range(of: "\r\n\r\n")?.lowerBound ?? text.endIndex
        let status = text.split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? -1
        return (status, String(text[..<end]), String(text[end...]).trimmingCharacters(in: .whitespacesAndNewlines))
    }

    /// What a client can get wrong, over the wire: each a 400 (or a 404 for a path no route has)
    /// with a problem document, and nothing asked of the Met for any of them.
    @Test func hostileRequestsAreProblemsAndNeverReachTheMet() async throws {
        let servers = try await Servers.start(themet: Self.unpaced)
        let refused: [(target: String, status: Int, code: String)] = [
            ("/objects?ids=1,,2", 400, "invalid_parameter"),
            ("/objects?ids=99999999999", 400, "invalid_parameter"),
            ("/objects?ids=-1", 400, "invalid_parameter"),
            ("/objects?ids=1&ids=2", 400, "invalid_parameter"),
            ("/objects?ids=" + (1...101).map(String.init).joined(separator: ","), 400, "invalid_parameter"),
            ("/objects?ids=1&wait=1e3", 400, "invalid_parameter"),
            ("/objects?ids=%31%00", 400, "invalid_parameter"),
            ("/objects?ids=1&fields=a%22b", 400, "invalid_parameter"),
            ("/objects?ids=1%", 400, "invalid_request_target"),
            ("/random?departmentId=-1", 400, "invalid_parameter"),
            ("/random?hasImages=yes", 400, "invalid_parameter"),
            ("/random?format=html", 400, "invalid_parameter"),
            ("/random?q=%20%09", 400, "invalid_parameter"),
            ("/random?q=a&sort=id", 400, "unknown_parameter"),
            ("/iiif/00436535/manifest.json", 400, "invalid_object_id"),
            ("/iiif/436535/manifest.json?callback=x", 400, "unknown_parameter"),
            ("/iiif/1%2F..%2F2/manifest.json", 404, "route_not_found"),
            ("/iiif/436535/manifest.json/", 404, "route_not_found"),
        ]
        for (target, status, code) in refused {
            let answer = try await Self.raw(
                "GET \(target) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n", port: servers.themet.port)
            #expect(answer.status == status, "\(target)")
            #expect(answer.head.contains("Content-Type: application/problem+json"), "\(target)")
            #expect(answer.body.contains(#""code":"\#(code)""#), "\(target): \(answer.body.prefix(200))")
        }
        #expect(try await servers.upstreamStats().total == 0)

        // The Host of a manifest request goes into its ids only when it is a plain authority.
        let port = servers.themet.port
        let named = try await Self.raw(
            "GET /iiif/437980/manifest.json HTTP/1.1\r\nHost: met.local:8080\r\nConnection: close\r\n\r\n", port: port)
        #expect(named.body.contains(#""id":"http://met.local:8080/iiif/437980/manifest.json""#))
        let hostless = try await Self.raw("GET /iiif/437980/manifest.json HTTP/1.0\r\n\r\n", port: port)
        #expect(hostless.body.contains(#""id":"http://localhost/iiif/437980/manifest.json""#))
        let strange = try await Self.raw(
            "GET /iiif/437980/manifest.json HTTP/1.1\r\nHost: a\"b\r\nConnection: close\r\n\r\n", port: port)
        #expect(!strange.body.contains("a\"b"))
        #expect(servers.themet.isRunning)
    }

    @Test func theExplorerIsServedWithItsPolicy() async throws {
        let servers = try await Servers.start()
        let page = try await servers.get("/", headers: ["Accept-Encoding": "gzip"])
        #expect(page.status == 200)
        #expect(page.header("Content-Type") == "text/html; charset=utf-8")
        #expect(page.header("Content-Security-Policy")?.contains("script-src 'self'") == true)
        #expect(String(decoding: page.body, as: UTF8.self).contains("<title>The Met explorer</title>"))
        for path in ["/explorer.js", "/explorer.css", "/favicon.svg"] {
            #expect(try await servers.get(path).status == 200)
        }
    }
}
