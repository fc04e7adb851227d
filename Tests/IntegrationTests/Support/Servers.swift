import Foundation
import TestKit

/// A `met-fixture-server` and a `themet` in front of it, both on loopback ports chosen by the OS.
struct Servers: Sendable {
    let fake: RunningProcess
    let themet: RunningProcess
    /// themet's data directory (`--data-dir`): `directory`'s, or the one `restartingThemet` was given.
    let dataDirectory: String
    /// The data directory `start` made, removed once the last copy of these servers goes.
    private let directory: TemporaryDirectory

    /// Starts the fake Met with `fakeArguments`, then themet against it with `themetArguments`
    /// (plus a fresh data directory and one loop per core).
    static func start(fake fakeArguments: [String] = [], themet themetArguments: [String] = []) async throws -> Servers
    {
        let fake = try await RunningProcess(
            BuiltProducts.fixtureServer, ["--port", "0", "--fixtures", BuiltProducts.fixtures.path] + fakeArguments)
        let directory = TemporaryDirectory()
        let themet = try await startThemet(upstream: fake, dataDirectory: directory.path, themetArguments)
        return Servers(fake: fake, themet: themet, dataDirectory: directory.path, directory: directory)
    }

    /// A new themet against the same fake Met and on the same data directory, as after a restart
    /// (stop the running one first: SIGTERM, then `waitForExit`), or on `dataDirectory`.
    func restartingThemet(_ themetArguments: [String] = [], dataDirectory: String? = nil) async throws -> Servers {
        let directory = dataDirectory ?? self.dataDirectory
        let themet = try await Self.startThemet(upstream: fake, dataDirectory: directory, themetArguments)
        return Servers(fake: fake, themet: themet, dataDirectory: directory, directory: self.directory)
    }

    private static func startThemet(
        upstream fake: RunningProcess, dataDirectory: String, _ arguments: [String]
    ) async throws -> RunningProcess {
        try await RunningProcess(
            BuiltProducts.themet,
            ["serve", "--port", "0", "--upstream", fake.baseURL, "--data-dir", dataDirectory] + arguments)
    }

    /// GET (or another method) against themet.
    func get(_ path: String, method: String = "GET", headers: [String: String] = [:]) async throws -> HTTPResult {
        try await HTTPClient.request(themet.baseURL + path, method: method, headers: headers)
    }

    /// The fake Met's request counters: total, and per path.
    func upstreamStats() async throws -> (total: Int, failed: Int, paths: [String: Int]) {
        let stats = try await HTTPClient.request(fake.baseURL + "/__stats").json()
        return (stats["total"] as? Int ?? -1, stats["failed"] as? Int ?? -1, stats["paths"] as? [String: Int] ?? [:])
    }

    /// Returns once `count` requests are in the fake Met's hands, waiting out its `--latency`:
    /// past themet's queues, so whatever themet holds for them is held. Polls for 30 s at most.
    func waitUntilTheMetHolds(_ count: Int) async throws {
        let deadline = Date().addingTimeInterval(30)
        var stats: [String: Any] = [:]
        repeat {
            stats = try await HTTPClient.request(fake.baseURL + "/__stats").json()
            if stats["waiting"] as? Int ?? 0 >= count { return }
            try await Task.sleep(for: .milliseconds(25))
        } while Date() < deadline
        throw ProcessFailure(
            "the fake Met never held \(count) requests at once: \(stats["waiting"] ?? "?") waiting, "
                + "\(stats["total"] ?? "?") answered")
    }

    /// Returns once themet's local search index holds at least `count` records (its disk tier
    /// commits what it stores within a batch window). Polls for 30 s at most.
    func waitUntilIndexed(_ count: Int) async throws {
        let deadline = Date().addingTimeInterval(30)
        var indexed = -1
        repeat {
            indexed = try await get("/search?source=local&limit=1").json()["indexed"] as? Int ?? -1
            if indexed >= count { return }
            try await Task.sleep(for: .milliseconds(25))
        } while Date() < deadline
        throw ProcessFailure("themet's search index never held \(count) records (it holds \(indexed))")
    }

    /// When each request reached the fake Met, seconds since 1970 (the first 10,000).
    func upstreamArrivals() async throws -> [Double] {
        try await HTTPClient.request(fake.baseURL + "/__stats").json()["arrivals"] as? [Double] ?? []
    }
}
