import Foundation
import TestKit
import Testing

/// `/metrics` through the real binaries, after a scripted workload, checked by Prometheus's own
/// `promtool check metrics` (Debian's prometheus package, which `make test` installs).
@Suite("/metrics for Prometheus")
struct MetricsRouteTests {
    /// promtool, where Debian puts it.
    static let promtool = ["/usr/bin/promtool", "/usr/local/bin/promtool"].first {
        FileManager.default.isExecutableFile(atPath: $0)
    }

    /// `promtool check metrics` on `text`: its exit status and what it printed.
    static func check(_ text: Data) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(
            fileURLWithPath: try #require(promtool, "no promtool: `make test` installs prometheus"))
        process.arguments = ["check", "metrics"]
        let input = Pipe()
        let output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = output
        try process.run()
        input.fileHandleForWriting.write(text)
        try input.fileHandleForWriting.close()
        let printed = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus, printed)
    }

    @Test func aScrapeAfterAWorkloadPassesPromtoolAndCountsWhatHappened() async throws {
        let servers = try await Servers.start(fake: ["--synthetic", "50"], themet: PersistenceTests.unpaced)
        for id in 1...10 { #expect(try await servers.get("/objects/\(id)").status == 200) }
        for id in 1...10 { #expect(try await servers.get("/objects/\(id)").status == 200) }
        #expect(try await servers.get("/objects/999999").status == 404)
        #expect(try await servers.get("/nowhere").status == 404)
        #expect(try await servers.get("/search?q=Synthetic&limit=5").status == 200)
        #expect(try await servers.get("/cache/objects/3", method: "DELETE").status == 200)
        #expect(try await servers.get("/health").status == 200)

        let scrape = try await servers.get("/metrics")
        #expect(scrape.status == 200)
        #expect(scrape.header("Content-Type") == "text/plain; version=0.0.4; charset=utf-8")
        let body = scrape.body
        let (status, output) = try await BlockingIO.onThread { Result { try Self.check(body) } }.get()
        #expect(status == 0, "promtool: \(output)")
        #expect(!output.contains("error"), "promtool: \(output)")

        let samples = MetricsSamples(String(decoding: scrape.body, as: UTF8.self))
        #expect(samples[#"themet_requests_total{route="object",status="2xx"}"#] == 20)
        #expect(samples[#"themet_requests_total{route="object",status="4xx"}"#] == 1)
        #expect(samples[#"themet_requests_total{route="none",status="4xx"}"#] == 1)
        #expect(samples[#"themet_requests_total{route="search",status="2xx"}"#] == 1)
        #expect(samples[#"themet_requests_total{route="purge",status="2xx"}"#] == 1)
        #expect(samples[#"themet_requests_total{route="health",status="2xx"}"#] == 1)
        #expect(samples[#"themet_request_duration_seconds_count{cache="hit",route="object"}"#] == 10)
        #expect(samples[#"themet_request_duration_seconds_count{cache="miss",route="object"}"#] == 11)  // the 404 too
        #expect(samples[#"themet_upstream_requests_total{endpoint="object",outcome="notFound"}"#] == 1)
        #expect((samples[#"themet_upstream_requests_total{endpoint="object",outcome="ok"}"#] ?? 0) >= 10)
        #expect(samples[#"themet_cache_evictions_total{reason="purge",tier="disk"}"#] == 1)
        #expect(samples[#"themet_disk_errors_total{operation="write"}"#] == 0)
        #expect(samples[#"themet_build_info{version="0.1.0"}"#] == 1)
        #expect(samples[#"themet_breaker_state{state="ok"}"#] == 1)
        servers.themet.signal(SIGTERM)
        #expect(await servers.themet.waitForExit() == 0)
    }
}

/// The samples of a scrape, by `name{labels}` as written.
struct MetricsSamples {
    private var values: [String: Double] = [:]

    init(_ text: String) {
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            guard let space = line.lastIndex(of: " "), let value = Double(line[line.index(after: space)...]) else {
                continue
            }
            values[String(line[..<space])] = value
        }
    }

    subscript(_ series: String) -> Double? { values[series] }
}
