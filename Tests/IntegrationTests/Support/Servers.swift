import Foundation

/// A `met-fixture-server` and a `themet` in front of it, both on loopback ports chosen by the OS.
struct Servers: Sendable {
    let fake: RunningProcess
    let themet: RunningProcess

    /// Starts the fake Met with `fakeArguments`, then themet against it with `themetArguments`
    /// (plus a fresh data directory and one loop per core).
    static func start(fake fakeArguments: [String] = [], themet themetArguments: [String] = []) async throws -> Servers
    {
        let fake = try await RunningProcess(
            BuiltProducts.fixtureServer, ["--port", "0", "--fixtures", BuiltProducts.fixtures.path] + fakeArguments)
        let dataDirectory = FileManager.default.temporaryDirectory
            .appendingPathComponent("themet-test-\(UUID().uuidString)").path
        let themet = try await RunningProcess(
            BuiltProducts.themet,
            ["serve", "--port", "0", "--upstream", fake.baseURL, "--data-dir", dataDirectory] + themetArguments)
        return Servers(fake: fake, themet: themet)
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
}
