import Foundation
import TestKit
import Testing

@Suite("A misbehaving upstream, hostile query bytes and hang-ups, through the real HTTP client")
struct UpstreamTrustTests {
    /// The data directory of this test's themet.
    private let directory = TemporaryDirectory()

    /// themet against `upstream` with small bounds: 1 MiB bodies, `timeout` per attempt, no retries.
    private func themet(against upstream: MisbehavingUpstream, timeout: String = "10s") async throws
        -> RunningProcess
    {
        try await RunningProcess(
            BuiltProducts.themet,
            [
                "serve", "--port", "0", "--upstream", upstream.baseURL, "--data-dir", directory.path,
                "--upstream-max-body", "1MiB", "--upstream-timeout", timeout, "--upstream-retries", "0",
                "--upstream-rate", "1000", "--upstream-burst", "1000",
            ])
    }

    @Test(arguments: [
        (MisbehavingUpstream.Behaviour.endlessBody, 502, "upstream_malformed"),
        (.gzipBomb, 502, "upstream_malformed"),
        (.oversizedWithLength, 502, "upstream_malformed"),
        (.oversizedChunked, 502, "upstream_malformed"),
        (.trickle, 504, "upstream_timeout"),
    ])
    func aMisbehavingAnswerIsAClearErrorAndNeverStored(
        behaviour: MisbehavingUpstream.Behaviour, status: Int, code: String
    ) async throws {
        let upstream = try MisbehavingUpstream()
        // The trickle would take 100 s; only the 1 s attempt bound can end it (a 504). The others
        // get time enough, even under ThreadSanitizer, for the body bound to end them first.
        let themet = try await themet(against: upstream, timeout: behaviour == .trickle ? "1s" : "20s")
        let baseline = try #require(themet.residentBytes)
        for attempt in 1...2 {
            let result = try await HTTPClient.request(themet.baseURL + "/objects/\(behaviour.rawValue)")
            #expect(result.status == status)
            #expect(try result.json()["code"] as? String == code)
            #expect(upstream.requests(for: behaviour) == attempt, "the failure was stored")
        }
        // Nothing of the answer stays: far less than what was sent (up to 256 MiB decoded).
        let after = try #require(themet.residentBytes)
        #expect(after - baseline < 48 * 1_048_576, "RSS grew from \(baseline) to \(after) bytes")
        #expect(try await HTTPClient.request(themet.baseURL + "/health").status == 200)
    }

    @Test func redirectsAreNotFollowed() async throws {
        let upstream = try MisbehavingUpstream()
        let themet = try await themet(against: upstream)
        let result = try await HTTPClient.request(
            themet.baseURL + "/objects/\(MisbehavingUpstream.Behaviour.redirect.rawValue)")
        #expect(result.status == 502)
        #expect(upstream.requests(for: .ordinary) == 0)
        #expect(try await HTTPClient.request(themet.baseURL + "/objects/6").status == 200)
    }

    /// Every visible ASCII byte raw, and every byte 0–255 percent-encoded, in a value of every
    /// route that passes values on, against the fake Met over real HTTP: each gets an HTTP
    /// answer and the server lives on (URLSession once trapped on `|` and on non-ASCII letters).
    @Test func everyQueryByteThroughEveryRouteGetsAnAnswer() async throws {
        let servers = try await Servers.start(
            themet: ["--upstream-rate", "10000", "--upstream-burst", "1000", "--upstream-concurrency", "64"])
        let visible = (0x21...0x7E).map { String(UnicodeScalar(UInt8($0))) }
        // Single bytes, then whole UTF-8 letters and the Met's own `3|11`.
        let encoded =
            (0...0xFF).map { "%" + String(format: "%02X", $0) } + ["%C3%A9", "%E2%80%8B", "%F0%9F%8C%BB", "3|11"]
        let routes = [
            "/objects/1?fields=", "/search?q=sun", "/search?q=a&medium=", "/widget/timeline?q=",
            "/public/collection/v1/objects?departmentIds=", "/public/collection/v1/search?q=",
            "/public/collection/v1.1/search?q=", "/public/collection/v1/search?q=a&geoLocation=", "/open/",
            "/objects?ids=1,", "/objects?ids=1&fields=", "/random?format=json&q=", "/random?departmentId=",
            "/iiif/1/manifest.json?x=", "/?utm_source=",
        ]
        var requests: [String] = []
        for route in routes {
            for value in visible + encoded { requests.append(route + value + "x") }
        }
        for batch in stride(from: 0, to: requests.count, by: 32) {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for target in requests[batch..<min(batch + 32, requests.count)] {
                    group.addTask {
                        let request = "GET \(target) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
                        let exchange = try await RawHTTP.exchange(
                            port: servers.themet.port, request: Array(request.utf8))
                        #expect(exchange.text.hasPrefix("HTTP/1.1 "), "no answer to \(target)")
                    }
                }
                try await group.waitForAll()
            }
        }
        #expect(servers.themet.isRunning)
        #expect(!servers.themet.standardError.contains("Fatal error"))
        #expect(try await servers.get("/health").status == 200)
    }
}
