import Foundation
import TestKit
import Testing

@Suite("Upstream failures, limits, hang-ups and shutdown")
struct ResilienceTests {
    @Test func outageServesStaleCopiesAndAClearErrorForTheRest() async throws {
        // --object-ttl 0: every cached object is stale at once, so each request asks the upstream.
        // No retries: this test is about the stale copy, not about riding out the outage.
        let servers = try await Servers.start(themet: [
            "--object-ttl", "0", "--stale-while-revalidate", "0", "--upstream-retries", "0",
        ])
        let first = try await servers.get("/objects/436535")
        #expect(first.status == 200)

        servers.fake.stop()
        let stale = try await servers.get("/objects/436535")
        #expect(stale.status == 200)
        #expect(stale.body == first.body)
        #expect(stale.header("Cache-Status")?.contains("fwd=stale") == true)

        let uncached = try await servers.get("/objects/437980")
        #expect(uncached.status == 502)
        #expect(try uncached.json()["code"] as? String == "upstream_unreachable")

        let health = try await servers.get("/health").json()
        #expect((health["upstream"] as? [String: Any])?["state"] as? String == "unreachable")
    }

    @Test func upstream5xxIsA503WithoutCaching() async throws {
        let servers = try await Servers.start(fake: ["--fail-rate", "1"], themet: ["--upstream-retries", "0"])
        for _ in 0..<2 {
            let result = try await servers.get("/objects/436535")
            #expect(result.status == 503)
            #expect(try result.json()["code"] as? String == "upstream_unavailable")
        }
        #expect(try await servers.upstreamStats().total == 2)
    }

    @Test func failuresAreRiddenOutByRetries() async throws {
        let servers = try await Servers.start(
            fake: ["--fail-rate", "0.3", "--seed", "7"],
            themet: ["--upstream-rate", "1000", "--upstream-burst", "1000", "--upstream-retries", "4"])
        for id in [436535, 437980, 45734, 1, 436533, 63372] {
            #expect(try await servers.get("/objects/\(id)").status == 200)
        }
        let stats = try await servers.upstreamStats()
        #expect(stats.failed > 0, "the fake failed nothing, so no retry was tested")
        #expect(stats.total == 6 + stats.failed)  // one extra call per failure, none more
    }

    /// During a block an uncached search is answered from the records the server holds
    /// (`--search-fallback local`, the default), saying so; with the fallback off, refused.
    @Test(arguments: [true, false])
    func firewallBlockPausesSearchesToo(fallback: Bool) async throws {
        // q=cypress costs 3 upstream calls (the search and two objects); the 4th is blocked.
        let servers = try await Servers.start(
            fake: ["--block-after", "3", "--block-seconds", "60"],
            themet: ["--upstream-rate", "1000", "--upstream-burst", "1000"]
                + (fallback ? [] : ["--search-fallback", "off"]))
        let first = try await servers.get("/search?q=cypress")
        #expect(first.status == 200)
        #expect((try first.json()["objects"] as? [Any])?.count == 2)
        #expect(try first.json()["source"] as? String == "met")
        try await servers.waitUntilIndexed(2)
        let blocked = try await servers.get("/objects/45734")
        #expect(blocked.status == 503)
        #expect(try blocked.json()["code"] as? String == "upstream_blocked")
        // During the cool-down: the cached search answers, an uncached one is answered from
        // the index or refused, and the fake hears nothing more.
        #expect(try await servers.get("/search?q=cypress").status == 200)
        let uncached = try await servers.get("/search?q=wheat")
        if fallback {
            #expect(uncached.status == 200)
            #expect(uncached.header("Cache-Status") == "TheMet; fwd=uri-miss; fwd-status=503; detail=local-fallback")
            #expect(uncached.header("Retry-After") == nil && uncached.header("Warning") == nil)
            let json = try uncached.json()
            #expect(json["source"] as? String == "local")
            #expect(json["indexed"] as? Int == 2)
            #expect((json["objects"] as? [[String: Any]])?.compactMap { $0["objectID"] as? Int } == [436_535])
        } else {
            #expect(uncached.status == 503)
            #expect(uncached.header("Retry-After") != nil)
        }
        #expect(try await servers.upstreamStats().total == 4)
    }

    @Test func firewallBlockPausesTheUpstream() async throws {
        let servers = try await Servers.start(fake: ["--block-after", "1", "--block-seconds", "60"])
        #expect(try await servers.get("/objects/436535").status == 200)
        let blocked = try await servers.get("/objects/437980")
        #expect(blocked.status == 503)
        #expect(try blocked.json()["code"] as? String == "upstream_blocked")
        #expect(Int(blocked.header("Retry-After") ?? "") ?? 0 > 0)
        // While blocked: cached objects still answer, and the upstream hears nothing more.
        #expect(try await servers.get("/objects/436535").status == 200)
        #expect(try await servers.get("/objects/45734").status == 503)
        #expect(try await servers.upstreamStats().total == 2)
        let health = try await servers.get("/health").json()
        let upstream = health["upstream"] as? [String: Any]
        #expect(upstream?["state"] as? String == "blocked")
        #expect(upstream?["blockedUntil"] as? String != nil)
    }

    @Test func oversizedRequestsGetTheirOwnStatus() async throws {
        let servers = try await Servers.start()
        let port = servers.themet.port
        let longTarget = "/objects/1?fields=" + String(repeating: "a", count: 9_000)
        let uri = try await RawHTTP.exchange(
            port: port, request: Array("GET \(longTarget) HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".utf8))
        #expect(uri.text.hasPrefix("HTTP/1.1 414"))
        #expect(uri.text.contains("\"code\":\"uri_too_long\""))

        let bigHeader = "X-Filler: " + String(repeating: "b", count: 20_000)
        let headers = try await RawHTTP.exchange(
            port: port,
            request: Array("GET /health HTTP/1.1\r\nHost: x\r\n\(bigHeader)\r\nConnection: close\r\n\r\n".utf8))
        #expect(headers.text.hasPrefix("HTTP/1.1 431"))
        #expect(headers.text.contains("application/problem+json"))

        let body = String(repeating: "c", count: 100_000)
        let post = try await RawHTTP.exchange(
            port: port,
            request: Array(
                "POST /objects/1 HTTP/1.1\r\nHost: x\r\nContent-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n\(body)"
                    .utf8))
        #expect(post.text.hasPrefix("HTTP/1.1 413"))
        #expect(post.text.contains("\"code\":\"body_too_large\""))
    }

    @Test func aClientThatStallsMidRequestIsDisconnected() async throws {
        let servers = try await Servers.start(themet: ["--idle-timeout", "1"])
        // Headers never finished: after the idle timeout, a 408 problem and the connection closes.
        let stalled = try await RawHTTP.exchange(
            port: servers.themet.port, request: Array("GET /health HTTP/1.1\r\nHost: x\r\n".utf8), readTimeout: 8)
        #expect(stalled.closedByServer)
        #expect(stalled.text.hasPrefix("HTTP/1.1 408 "))
        #expect(stalled.text.contains("\"code\":\"request_timeout\""))
        // An idle keep-alive connection is closed without a word.
        let idle = try await RawHTTP.exchange(port: servers.themet.port, request: [], readTimeout: 8)
        #expect(idle.closedByServer)
        #expect(idle.bytes.isEmpty)
        #expect(try await servers.get("/health").status == 200)
    }

    @Test func clientThatHangsUpIsNoticed() async throws {
        // The Met answers long after the window below, even on a machine busy with other tests:
        // the 499 is logged when the client leaves, not when the fetch ends.
        // (Seconds apart: on two cores beside the picture suites, the line took over 5 s.)
        let servers = try await Servers.start(
            fake: ["--latency", "20000"], themet: ["--upstream-timeout", "40s", "--request-timeout", "60s"])
        _ = try await RawHTTP.exchange(
            port: servers.themet.port, request: Array("GET /objects/436535 HTTP/1.1\r\nHost: x\r\n\r\n".utf8),
            hangUpAfter: 0.2)
        var logged = false
        for _ in 0..<750 where !logged {
            logged = servers.themet.standardError.contains("/objects/436535\" 499 ")
            if !logged { try await Task.sleep(for: .milliseconds(20)) }
        }
        #expect(logged, "no 499 access-log line within 15 s: \(servers.themet.standardError)")
        // The server carries on, and the fetch the client started still fills the cache.
        #expect(try await servers.get("/health").status == 200)
        let after = try await servers.get("/objects/436535")
        #expect(after.status == 200)
        #expect(try await servers.upstreamStats().total == 1)
    }

    @Test func sigtermFinishesInFlightRequestsAndExitsZero() async throws {
        // The signal is sent once the Met holds the request, never before the client has connected:
        // a server that stops accepting at a SIGTERM would refuse a request still on its way. The
        // Met holds it for 8 s (the server waits 10 for it): under ThreadSanitizer, polls of the
        // fake's counts once missed a 3 s window.
        let servers = try await Servers.start(fake: ["--latency", "8000"])
        async let slow = servers.get("/objects/436535")
        try await servers.waitUntilTheMetHolds(1)
        servers.themet.signal(SIGTERM)
        let result = try await slow
        #expect(result.status == 200)
        #expect(await servers.themet.waitForExit() == 0)
    }

    @Test func clientsHangingUpDuringMissesNeverWedgeTheServer() async throws {
        // A cancel racing the upstream's answer once deadlocked URLSession, then crashed it
        // (TaskRegistry). Waves of hang-ups, half of them resets, landing from before the fake
        // answers to after it (0–2× its latency) make that race likely.
        let servers = try await Servers.start(
            fake: ["--synthetic", "5000", "--latency", "20"],
            themet: ["--upstream-rate", "10000", "--upstream-burst", "1000", "--upstream-concurrency", "64"])
        for wave in 0..<12 {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for index in 0..<100 {
                    let request = "GET /objects/\(100 + wave * 100 + index) HTTP/1.1\r\nHost: x\r\n\r\n"
                    group.addTask {
                        _ = try await RawHTTP.exchange(
                            port: servers.themet.port, request: Array(request.utf8),
                            hangUpAfter: Double(index % 41) * 0.001, reset: index % 2 == 0)
                    }
                }
                try await group.waitForAll()
            }
        }
        #expect(try await servers.get("/health").status == 200)
        #expect(!servers.themet.standardError.contains("Fatal error"))
        servers.themet.signal(SIGTERM)
        #expect(await servers.themet.waitForExit() == 0)
    }

    @Test(arguments: [
        ["--port", "http"], ["--stale-while-revalidate", "366d"], ["--stale-while-revalidate", "-1s"],
        ["--stale-while-revalidate", "soon"],
    ])
    func badConfigurationExits64NamingTheFlag(arguments: [String]) async throws {
        let process = Process()
        process.executableURL = BuiltProducts.themet
        process.environment = BuiltProducts.environment
        process.arguments = ["serve"] + arguments
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = Pipe()
        try process.run()
        let text = await BlockingIO.onThread {
            let text = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            return text
        }
        #expect(process.terminationStatus == 64)
        #expect(text.contains(arguments[0]))
        #expect(text.split(separator: "\n").count == 1)
    }
}
