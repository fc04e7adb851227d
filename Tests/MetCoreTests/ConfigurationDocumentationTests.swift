import Foundation
import Testing

@testable import MetCore
@testable import MetEngine

@Suite("The README's configuration table")
struct ReadmeConfigurationTableTests {
    /// The README at the repository root, found from this file's path.
    static let readme =
        (try? String(contentsOf: Repository.root.appendingPathComponent("README.md"), encoding: .utf8)) ?? ""

    @Test(arguments: ServerConfiguration.options.map(\.flag))
    func listsEveryOptionWithItsVariable(flag: String) throws {
        let option = try #require(ServerConfiguration.options.first { $0.flag == flag })
        #expect(Self.readme.contains("| `\(flag)` | `\(option.environmentVariable)` |"))
    }

    @Test func listsTheOptionsInTheTableOrder() {
        let positions = ServerConfiguration.options.compactMap { Self.readme.range(of: "| `\($0.flag)` |")?.lowerBound }
        #expect(positions.count == ServerConfiguration.options.count)
        #expect(positions == positions.sorted())
    }
}

@Suite("--help defaults are the real defaults")
struct HelpDefaultTests {
    static let environment = ["HOME": "/home/ada"]
    static let processorCount = 3
    /// What no flag and no variable give, the defaults `--help` describes.
    static func defaults() throws -> ServerConfiguration {
        try ServerConfiguration.parse(arguments: [], environment: environment, processorCount: processorCount)
    }

    /// Options whose default depends on the machine or is no value at all, so `--help` describes it
    /// in words; each is checked against the real default below. Every other default is a value.
    static let describedDefaults: Set<String> = [
        "--data-dir", "--loops", "--max-connections", "--public-url", "--admin-token", "--redis",
        "--redis-fallback-rate", "--trusted-proxy", "--redis-secret", "--redis-secret-file", "--image-upstream",
    ]

    @Test(arguments: ServerConfiguration.options.map(\.flag))
    func theUsageTextShowsTheOptionsDefault(flag: String) throws {
        let option = try #require(ServerConfiguration.options.first { $0.flag == flag })
        #expect(ServerConfiguration.usage.contains("[\(option.environmentVariable); default \(option.defaultText)]"))
    }

    /// The printed default, given as the flag's value, changes nothing: it is the value the
    /// configuration has without the flag.
    @Test(arguments: ServerConfiguration.options.map(\.flag).filter { !describedDefaults.contains($0) })
    func aDefaultShownAsAValueIsTheRealDefault(flag: String) throws {
        let option = try #require(ServerConfiguration.options.first { $0.flag == flag })
        let given = try ServerConfiguration.parse(
            arguments: [flag, option.defaultText], environment: Self.environment, processorCount: Self.processorCount)
        #expect(given == (try Self.defaults()), "\(flag): --help says \(option.defaultText)")
    }

    @Test func defaultsDescribedInWordsAreTheRealDefaults() throws {
        func text(_ flag: String) -> String? { ServerConfiguration.options.first { $0.flag == flag }?.defaultText }
        let defaults = try Self.defaults()

        #expect(text("--data-dir") == "$XDG_CACHE_HOME/themet or ~/.cache/themet")
        #expect(defaults.cache.dataDirectory == "/home/ada/.cache/themet")
        let xdg = try ServerConfiguration.parse(
            arguments: [], environment: ["XDG_CACHE_HOME": "/xdg", "HOME": "/home/ada"], processorCount: 1)
        #expect(xdg.cache.dataDirectory == "/xdg/themet")

        #expect(text("--loops") == "one per core")
        #expect(defaults.http.loops == Self.processorCount)

        // nil: the server works the limit out when it starts.
        #expect(text("--max-connections") == "descriptor limit - 128")
        #expect(defaults.http.maxConnections == nil)

        #expect(text("--public-url") == "none (relative links)")
        #expect(defaults.presentation.publicURL == nil)

        #expect(text("--admin-token") == "none (clients on this machine only)")
        #expect(defaults.access.adminToken == nil)

        #expect(text("--trusted-proxy") == "none")
        #expect(defaults.access.trustedProxies == .none)

        #expect(text("--redis-secret") == "none (Redis writers are trusted)")
        #expect(text("--redis-secret-file") == "none")
        #expect(defaults.redis.secret == nil && defaults.redis.secretFile == nil)

        #expect(text("--redis") == "none")
        #expect(defaults.redis.address == nil)

        #expect(text("--image-upstream") == "https://images.metmuseum.org, or --upstream when it is not the Met's")
        #expect(defaults.images.location == nil)
        #expect(defaults.imageLocation == .origin("https://images.metmuseum.org"))
        var elsewhere = defaults
        elsewhere.upstream.location = .origin("http://127.0.0.1:9")
        #expect(elsewhere.imageLocation == .origin("http://127.0.0.1:9"))

        #expect(text("--redis-fallback-rate") == "a quarter of --upstream-rate")
        #expect(defaults.redis.fallbackRate == nil)
        #expect(defaults.fallbackRate == defaults.upstream.rate / 4)
    }

    @Test(arguments: ServerConfiguration.options.map(\.flag).filter { !describedDefaults.contains($0) })
    func theReadmeShowsTheSameDefault(flag: String) throws {
        let option = try #require(ServerConfiguration.options.first { $0.flag == flag })
        #expect(
            ReadmeConfigurationTableTests.readme.contains(
                "| `\(flag)` | `\(option.environmentVariable)` | `\(option.defaultText)` |"))
    }
}
