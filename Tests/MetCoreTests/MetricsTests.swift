import Foundation
import Testing

@testable import MetCore
@testable import MetEngine

/// `/metrics`: the Prometheus text format, with what the core counted.
@Suite("Metrics")
struct MetricsTests {
    /// The samples of a scrape, by `name{labels}` exactly as written (labels sorted by name).
    static func samples(_ text: String) -> [String: Double] {
        var samples: [String: Double] = [:]
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            guard let space = line.lastIndex(of: " "), let value = Double(line[line.index(after: space)...]) else {
                continue
            }
            samples[String(line[..<space])] = value
        }
        return samples
    }

    @Test func aScrapeShowsTheLookupsUpstreamCallsPurgesAndRequestsCounted() async throws {
        let disk = RecordingTier()
        let upstream = FakeUpstream([Sample.objectKey(1): .json(Sample.object(1))])
        upstream.answer(.object(id: 9), with: .notFound())
        let harness = Harness(upstream: upstream, disk: disk)
        let miss = await harness.get("/objects/1")
        let hit = await harness.get("/objects/1")
        _ = await harness.get("/objects/9")
        var purge = Request(method: "DELETE", target: "/cache/objects/1")
        purge.peer = .loopback
        _ = await harness.service.response(to: purge)
        // What the HTTP layer reports after writing each response.
        harness.service.finished(miss, seconds: 0.003)
        harness.service.finished(hit, seconds: 0.000_05)
        harness.service.finished(await harness.get("/nowhere"), seconds: 0.000_02)

        let scrape = await harness.get("/metrics")
        #expect(scrape.status == 200)
        #expect(scrape.headers["Content-Type"] == "text/plain; version=0.0.4; charset=utf-8")
        #expect(scrape.headers["Cache-Control"] == "no-store")
        let samples = Self.samples(scrape.text)
        #expect(samples[#"themet_requests_total{route="object",status="2xx"}"#] == 2)
        #expect(samples[#"themet_requests_total{route="none",status="4xx"}"#] == 1)
        #expect(samples[#"themet_requests_total{route="search",status="2xx"}"#] == 0)
        #expect(samples[#"themet_request_duration_seconds_bucket{cache="miss",le="0.0025",route="object"}"#] == 0)
        #expect(samples[#"themet_request_duration_seconds_bucket{cache="miss",le="0.005",route="object"}"#] == 1)
        #expect(samples[#"themet_request_duration_seconds_bucket{cache="hit",le="0.0001",route="object"}"#] == 1)
        #expect(samples[#"themet_request_duration_seconds_bucket{cache="hit",le="+Inf",route="object"}"#] == 1)
        #expect(samples[#"themet_request_duration_seconds_count{cache="miss",route="object"}"#] == 1)
        #expect(
            abs((samples[#"themet_request_duration_seconds_sum{cache="miss",route="object"}"#] ?? 0) - 0.003) < 1e-6)
        // Two misses in memory (1 and 9) and one hit; the same two misses on the disk.
        #expect(samples[#"themet_cache_lookups_total{result="miss",tier="memory"}"#] == 2)
        #expect(samples[#"themet_cache_lookups_total{result="hit",tier="memory"}"#] == 1)
        #expect(samples[#"themet_cache_lookups_total{result="miss",tier="disk"}"#] == 2)
        #expect(samples[#"themet_upstream_requests_total{endpoint="object",outcome="ok"}"#] == 1)
        #expect(samples[#"themet_upstream_requests_total{endpoint="object",outcome="notFound"}"#] == 1)
        #expect(samples[#"themet_upstream_request_duration_seconds_count{endpoint="object"}"#] == 2)
        #expect(samples[#"themet_cache_evictions_total{reason="purge",tier="memory"}"#] == 1)
        #expect(samples[#"themet_cache_evictions_total{reason="purge",tier="disk"}"#] == 1)
        #expect(samples[#"themet_cache_entries{tier="memory"}"#] == 1)
        #expect(samples[#"themet_breaker_state{state="ok"}"#] == 1)
        #expect(samples[#"themet_breaker_trips_total"#] == 0)
        #expect(samples[#"themet_build_info{version="\#(MetService.version)"}"#] == 1)
    }

    @Test func everySampleBelongsToAFamilyWithHelpAndTypeBeforeIt() async throws {
        let harness = Harness(upstream: FakeUpstream([Sample.objectKey(1): .json(Sample.object(1))]))
        harness.service.finished(await harness.get("/objects/1"), seconds: 0.2)
        var typed: [String: String] = [:]
        var helped = Set<String>()
        for line in await harness.get("/metrics").text.split(separator: "\n") {
            let words = line.split(separator: " ")
            if line.hasPrefix("# HELP ") {
                helped.insert(String(words[2]))
            } else if line.hasPrefix("# TYPE ") {
                typed[String(words[2])] = String(words[3])
            } else {
                let name = String(line.prefix { $0 != "{" && $0 != " " })
                let family = typed.keys.first { candidate in
                    if name == candidate { return true }
                    guard typed[candidate] == "histogram" else { return false }
                    return ["_bucket", "_sum", "_count"].contains { suffix in name == candidate + suffix }
                }
                #expect(family != nil, "\(name) has no # TYPE before it")
                if let family { #expect(helped.contains(family)) }
                #expect(name.hasPrefix("themet_"))
                if let family, typed[family] == "counter" { #expect(name.hasSuffix("_total"), "\(name)") }
            }
        }
        #expect(typed["themet_request_duration_seconds"] == "histogram")
    }

    @Test func aBreakerTripAndPacerWaitsAreCounted() async throws {
        let upstream = FakeUpstream([Sample.objectKey(1): .blockPage])
        let harness = Harness(upstream: upstream)
        _ = await harness.get("/objects/1")
        let samples = Self.samples(await harness.get("/metrics").text)
        #expect(samples[#"themet_breaker_trips_total"#] == 1)
        #expect(samples[#"themet_breaker_state{state="blocked"}"#] == 1)
        #expect(samples[#"themet_upstream_requests_total{endpoint="object",outcome="blocked"}"#] == 1)
        #expect(samples[#"themet_pacer_waits_total"#] == 0)
    }
}
