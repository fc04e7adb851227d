import Foundation
import MetCore
import MetEngine
import TestKit

/// A redis-server for a test. `shared()` is the one `make test` started (`THEMET_TEST_REDIS`),
/// which each test uses under a prefix of its own; `own()` starts one on a free loopback port,
/// for a test that stops and restarts it (and when no shared one runs). Stopped when released.
final class RedisServer: Sendable {
    let url: String
    let port: Int
    private let directory: String
    private let process = Locked<Process?>(nil)

    private init(url: String, port: Int, directory: String) {
        self.url = url
        self.port = port
        self.directory = directory
    }

    /// The Redis `make test` runs, else one of this test's own.
    static func shared() async throws -> RedisServer {
        if let url = ProcessInfo.processInfo.environment["THEMET_TEST_REDIS"], let address = RedisAddress(url),
            case .tcp(_, let port) = address.endpoint
        {
            return RedisServer(url: url, port: port, directory: "")
        }
        return try await own()
    }

    /// A new redis-server on a free loopback port, with no persistence, its files in a fresh
    /// temporary directory.
    static func own() async throws -> RedisServer {
        let port = try freePort()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("themet-redis-\(UUID())").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let server = RedisServer(url: "redis://127.0.0.1:\(port)", port: port, directory: directory)
        try await server.start()
        return server
    }

    /// Starts (or restarts) the server on its port and waits until it accepts connections.
    func start() async throws {
        guard
            let executable = ["/usr/bin/redis-server", "/usr/local/bin/redis-server", "/usr/sbin/redis-server"]
                .first(where: FileManager.default.isExecutableFile(atPath:))
        else { throw ProcessFailure("redis-server is not installed (make test installs it)") }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = [
            "--bind", "127.0.0.1", "--port", String(port), "--save", "", "--appendonly", "no", "--dir", directory,
            "--logfile", directory + "/redis.log",
        ]
        try process.run()
        self.process.withLock { $0 = process }
        for _ in 0..<500 {
            if let socket = try? RawConnection.connect(port: port, readTimeout: 1) {
                close(socket)
                return
            }
            try await Task.sleep(for: .milliseconds(10))
        }
        throw ProcessFailure("redis-server on port \(port) did not start")
    }

    /// Kills the server (SIGKILL: no goodbye to its clients) and waits until it is gone.
    func kill() {
        guard let process = process.withLock({ $0 }) else { return }
        Glibc.kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    /// Stops the server (SIGSTOP): its connections stay open, and nothing answers on them.
    func pause() {
        guard let process = process.withLock({ $0 }) else { return }
        Glibc.kill(process.processIdentifier, SIGSTOP)
    }

    /// Lets a paused server go on (SIGCONT).
    func resume() {
        guard let process = process.withLock({ $0 }) else { return }
        Glibc.kill(process.processIdentifier, SIGCONT)
    }

    deinit {
        resume()
        kill()
    }

    /// A port the OS had free a moment ago (it may be taken again before redis-server binds it:
    /// then `start` fails and says so).
    private static func freePort() throws -> Int {
        let (descriptor, port) = try Loopback.bind(listening: false)
        close(descriptor)
        return port
    }
}

/// One `met-fixture-server` and several `themet` instances in front of it sharing one Redis,
/// under a key prefix of this group's own, each with a data directory of its own.
struct InstanceGroup: Sendable {
    let fake: RunningProcess
    let instances: [RunningProcess]
    /// The instances' data directories, removed once the last copy of the group goes.
    let directories: [TemporaryDirectory]
    let redis: RedisServer
    /// What every Redis key and the channel of this group start with (`--redis-prefix`).
    let prefix: String

    static func start(
        _ count: Int = 3, redis: RedisServer, byName: Bool = false, fake fakeArguments: [String] = [],
        themet themetArguments: [String] = []
    ) async throws -> InstanceGroup {
        // By name: `localhost`, which the server resolves off its loop, instead of 127.0.0.1.
        let url = byName ? "redis://localhost:\(redis.port)" : redis.url
        let fake = try await RunningProcess(
            BuiltProducts.fixtureServer, ["--port", "0", "--fixtures", BuiltProducts.fixtures.path] + fakeArguments)
        let prefix = "test-\(UUID().uuidString.prefix(8)):"
        // Redis is well here unless a test says otherwise: the default 100 ms, meant for a LAN, is
        // passed now and then by a debug build on two cores busy with the whole suite, and an
        // instance that gives up on Redis rightly goes it alone, which is not what these tests ask.
        let redisTimeout = themetArguments.contains("--redis-timeout") ? [] : ["--redis-timeout", "2s"]
        var instances: [RunningProcess] = []
        let directories = (0..<count).map { _ in TemporaryDirectory() }
        for dataDirectory in directories.map(\.path) {
            instances.append(
                try await RunningProcess(
                    BuiltProducts.themet,
                    [
                        "serve", "--port", "0", "--upstream", fake.baseURL, "--data-dir", dataDirectory, "--loops", "1",
                        "--redis", url, "--redis-prefix", prefix,
                    ] + redisTimeout + themetArguments))
        }
        let group = InstanceGroup(
            fake: fake, instances: instances, directories: directories, redis: redis, prefix: prefix)
        try await group.waitUntilConnected()
        return group
    }

    /// GET (or another method) against instance `index`.
    func get(_ index: Int, _ path: String, method: String = "GET") async throws -> HTTPResult {
        try await HTTPClient.request(instances[index].baseURL + path, method: method)
    }

    /// The `redis` member of instance `index`'s `/health`.
    func redisHealth(_ index: Int) async throws -> [String: Any] {
        try await get(index, "/health").json()["redis"] as? [String: Any] ?? [:]
    }

    /// Waits (at most 20 s: the reconnect back-off reaches 5 s) until every instance reports Redis
    /// connected.
    func waitUntilConnected() async throws {
        for _ in 0..<400 {
            var connected = 0
            for index in instances.indices where try await redisHealth(index)["state"] as? String == "connected" {
                connected += 1
            }
            if connected == instances.count { return }
            try await Task.sleep(for: .milliseconds(50))
        }
        throw ProcessFailure("the instances never all connected to Redis")
    }

    /// The fake Met's counters, with each request's arrival time.
    func upstreamStats() async throws -> (total: Int, paths: [String: Int], arrivals: [Double]) {
        let stats = try await HTTPClient.request(fake.baseURL + "/__stats").json()
        return (
            stats["total"] as? Int ?? -1, stats["paths"] as? [String: Int] ?? [:], stats["arrivals"] as? [Double] ?? []
        )
    }
}
