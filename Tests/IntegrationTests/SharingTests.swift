import Foundation
import Testing

/// One server shared on a LAN, through the built binaries (themet's libcurl client over HTTP to the
/// fake Met): fair shares of the upstream between clients, and the reverse proxy the README
/// documents (nginx) in front, trusted and not. A second client is a second loopback address
/// (127.0.0.2).
// Serialized: the flood keeps both cores busy, and the proxy tests count log lines.
@Suite("Sharing one server on a LAN", .serialized)
struct SharingTests {
    /// A GET from `source` (a loopback address) straight to `port`, with `headers`.
    private static func get(
        _ target: String, port: Int, from source: String, method: String = "GET", headers: [String: String] = [:]
    ) async throws -> String {
        let fields = headers.map { "\($0.key): \($0.value)\r\n" }.joined()
        return try await RawConnection.exchange(
            port: port, from: source,
            "\(method) \(target) HTTP/1.1\r\nHost: met.lan\r\n\(fields)Connection: close\r\n\r\n")
    }

    /// themet's access lines (text format, standard error) for `target`, once at least `count`
    /// of them are written (the loops write theirs within 200 ms; bounded at 5 s).
    private static func accessLines(_ servers: Servers, _ target: String, count: Int = 1) async throws -> [String] {
        var lines: [String] = []
        for _ in 0..<100 {
            lines = servers.themet.standardError.split(separator: "\n").map(String.init)
                .filter { $0.contains("\"\(target)\"") }
            if lines.count >= count { break }
            try await Task.sleep(for: .milliseconds(50))
        }
        return lines
    }

    /// The client field of an access line (after the time).
    private static func client(of line: String) -> String {
        String(line.split(separator: " ").dropFirst().first ?? "")
    }

    // MARK: Fair shares

    /// The check: with the default pacing (one request a second, three at once) and a Met
    /// that takes 50 ms, client A floods (10 batches of 100 uncached IDs and 60 uncached singles
    /// at once). Client B's one uncached object comes in B's turn: within a couple of upstream
    /// requests of B's asking, not behind A's hundreds (29 s before this was built). A's excess
    /// gets 429s with Retry-After, and hits stay hits for everyone.
    @Test func aFloodFromOneClientLeavesAnothersMissItsTurn() async throws {
        // A's singles that fit in its share wait behind its own batch: they give up (504) after a
        // request timeout shorter than the test client's.
        let servers = try await Servers.start(
            fake: ["--synthetic", "5000", "--latency", "50"], themet: ["--request-timeout", "10s"])
        let port = servers.themet.port
        #expect(try await servers.get("/objects/4000").status == 200)  // cached for the hit below
        let flood = Task {
            try await withThrowingTaskGroup(of: HTTPResult.self) { requests in
                for batch in 0..<10 {
                    let ids = (1...100).map { String(batch * 100 + $0) }.joined(separator: ",")
                    requests.addTask { try await servers.get("/objects?ids=" + ids) }
                }
                for id in 1_001...1_060 { requests.addTask { try await servers.get("/objects/\(id)") } }
                return try await requests.reduce(into: [HTTPResult]()) { $0.append($1) }
            }
        }
        // A's queue is full once a request of A's was refused, and the flood is all taken in once
        // the refusals stop growing: B then asks a server that is not still reading A's requests
        // (which under ThreadSanitizer takes seconds, while A's calls go on reaching the Met).
        var refused = 0
        var before = -1
        for _ in 0..<200 where refused == 0 || refused != before {
            before = refused
            let pacer = (try await servers.get("/health").json()["upstream"] as? [String: Any])?["pacer"]
            refused = (pacer as? [String: Any])?["refused"] as? Int ?? 0
            try await Task.sleep(for: .milliseconds(refused == 0 ? 10 : 200))
        }
        #expect(refused > 0)
        let hit = try await Self.get("/objects/4000", port: port, from: "127.0.0.1")
        #expect(hit.hasPrefix("HTTP/1.1 200 ") && hit.contains("Cache-Status: TheMet; hit"))

        let asked = Date().timeIntervalSince1970
        let answer = try await Self.get("/objects/2000", port: port, from: "127.0.0.2")
        let answered = Date().timeIntervalSince1970
        #expect(answer.hasPrefix("HTTP/1.1 200 "))
        #expect(answer.contains("Cache-Status: TheMet; fwd=uri-miss; stored"))
        // What reached the Met while B waited: B's fetch, A's turn before it, and at most one of
        // A's that already had its token when B asked. Not A's hundred.
        let meanwhile = try await servers.upstreamArrivals().filter { $0 > asked && $0 <= answered }
        #expect(meanwhile.count <= 3, "\(meanwhile.count) upstream requests while B waited \(answered - asked) s")

        // A never has more than its share waiting.
        let pacer = try #require(
            (try await servers.get("/health").json()["upstream"] as? [String: Any])?["pacer"] as? [String: Any])
        #expect((pacer["waiting"] as? Int ?? .max) <= 100)
        let results = try await flood.value
        // 504: a single of A's that fitted in its share and waited behind A's own batch.
        #expect(results.allSatisfy { [200, 429, 504].contains($0.status) })
        let tooMany = results.filter { $0.status == 429 }
        // However A's requests arrived, at most one batch of 100 fitted in its share.
        #expect(tooMany.count >= 9, "\(tooMany.count) of A's 70 requests were refused")
        for result in tooMany {
            #expect(try result.json()["code"] as? String == "too_many_requests")
            #expect((result.header("Retry-After").flatMap(Int.init) ?? 0) >= 1)
        }
        let metrics = String(decoding: try await servers.get("/metrics").body, as: UTF8.self)
        #expect(metrics.contains("themet_upstream_refused_total"))
        #expect(!metrics.contains("127.0.0.2") && !metrics.contains("127.0.0.1"))
    }

    // MARK: Behind nginx

    @Test func aPurgeThroughAProxyOnThisHostIsRefusedWithoutATrustedProxyAndTheProxyIsTheClient() async throws {
        let servers = try await Servers.start()
        let nginx = try await Nginx(proxyingTo: servers.themet.port)
        #expect(try await servers.get("/objects/436535").status == 200)
        let purge = try await Self.get(
            "/cache/objects/436535", port: nginx.port, from: "127.0.0.2", method: "DELETE")
        #expect(purge.hasPrefix("HTTP/1.1 403 "), "\(purge.prefix(200))")
        #expect(purge.contains("\"code\":\"forbidden\""))
        // Still cached: nothing was removed.
        let after = try await servers.get("/objects/436535")
        #expect(after.header("Cache-Status")?.hasPrefix("TheMet; hit") == true)
        // Not trusted: the log shows the proxy, whatever the field says.
        let line = try #require(try await Self.accessLines(servers, "DELETE /cache/objects/436535").first)
        #expect(Self.client(of: line) == "127.0.0.1")
        // From this machine, straight, the same purge is allowed.
        let local = try await Self.get(
            "/cache/objects/436535", port: servers.themet.port, from: "127.0.0.1",
            method: "DELETE")
        #expect(local.hasPrefix("HTTP/1.1 200 "))
    }

    @Test func withAnAdminTokenAPurgeThroughTheProxyNeedsItAndSoDoesThisMachine() async throws {
        let token = "a-token-of-sixteen-or-more"
        let servers = try await Servers.start(themet: ["--admin-token", token])
        let nginx = try await Nginx(proxyingTo: servers.themet.port)
        #expect(try await servers.get("/objects/436535").status == 200)
        for (port, source) in [(nginx.port, "127.0.0.2"), (servers.themet.port, "127.0.0.1")] {
            let refused = try await Self.get("/cache/objects/436535", port: port, from: source, method: "DELETE")
            #expect(refused.hasPrefix("HTTP/1.1 403 "), "\(port) from \(source)")
        }
        let allowed = try await Self.get(
            "/cache/objects/436535", port: nginx.port, from: "127.0.0.2", method: "DELETE",
            headers: ["Authorization": "Bearer \(token)"])
        #expect(allowed.hasPrefix("HTTP/1.1 200 "))
    }

    @Test func aTrustedProxyNamesTheClientAndAForgedFieldFromAnyoneElseChangesNothing() async throws {
        let servers = try await Servers.start(themet: ["--trusted-proxy", "127.0.0.1"])
        let nginx = try await Nginx(proxyingTo: servers.themet.port)
        // A LAN client through the proxy, which appends the address it saw to what the client sent.
        let through = try await Self.get(
            "/objects/436535", port: nginx.port, from: "127.0.0.2", headers: ["X-Forwarded-For": "203.0.113.66"])
        #expect(through.hasPrefix("HTTP/1.1 200 "))
        let line = try #require(try await Self.accessLines(servers, "GET /objects/436535").first)
        #expect(Self.client(of: line) == "127.0.0.2")
        // Trusted or not, a purge through the proxy is not local.
        let purge = try await Self.get(
            "/cache/objects/436535", port: nginx.port, from: "127.0.0.2", method: "DELETE")
        #expect(purge.hasPrefix("HTTP/1.1 403 "))
        // The IIIF manifest's ids take the Host the proxy passes on, and the scheme it says.
        let manifest = try await Self.get("/iiif/436535/manifest.json", port: nginx.port, from: "127.0.0.2")
        #expect(manifest.contains("http://met.lan/iiif/436535/manifest.json"))
        let secure = try await Self.get(
            "/iiif/436535/manifest.json", port: servers.themet.port, from: "127.0.0.1",
            headers: ["X-Forwarded-For": "127.0.0.2", "X-Forwarded-Proto": "https"])
        #expect(secure.contains("https://met.lan/iiif/436535/manifest.json"))
        // Straight from an untrusted peer, the field is not read.
        let forged = try await Self.get(
            "/objects/45734", port: servers.themet.port, from: "127.0.0.2",
            headers: ["X-Forwarded-For": "198.51.100.9", "Forwarded": "for=198.51.100.9"])
        #expect(forged.hasPrefix("HTTP/1.1 200 "))
        let forgedLine = try #require(try await Self.accessLines(servers, "GET /objects/45734").first)
        #expect(Self.client(of: forgedLine) == "127.0.0.2")
        #expect(!servers.themet.standardError.contains("198.51.100.9"))
    }
}
