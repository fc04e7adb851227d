import Foundation
import Testing

@testable import MetCore

@Suite("Configuration parsing")
struct ConfigurationTests {
    private func parse(_ arguments: [String] = [], environment: [String: String] = [:], processorCount: Int = 4)
        throws(ConfigurationError) -> ServerConfiguration
    {
        try ServerConfiguration.parse(arguments: arguments, environment: environment, processorCount: processorCount)
    }

    @Test func noFlagsAndNoEnvironmentGiveTheDefaults() throws {
        let configuration = try parse(environment: ["HOME": "/home/ada"], processorCount: 4)
        #expect(configuration.host == "127.0.0.1")
        #expect(configuration.port == 8080)
        #expect(configuration.upstream == .origin("https://collectionapi.metmuseum.org"))
        #expect(configuration.dataDirectory == "/home/ada/.cache/themet")
        #expect(configuration.loops == 4)
        #expect(configuration.cacheSize == 256 * 1_048_576)
        #expect(configuration.upstreamTimeout == 10)
        #expect(configuration.idleTimeout == 60)
        #expect(configuration.readTimeout == 10)
        #expect(configuration.maxConnections == nil)
        #expect(configuration.shutdownTimeout == 10)
        #expect(configuration.cors == .any)
        #expect(configuration.logLevel == .info)
        #expect(configuration.freshness == FreshnessPolicy())
        #expect(configuration.freshness.object == 2_592_000)
        #expect(configuration.syncInterval == 86_400)
        #expect(configuration.freshness.objectList == 3_600)
        #expect(configuration.freshness.departments == 604_800)
        #expect(configuration.freshness.notFound == 3_600)
        #expect(configuration.freshness.staleIfError == 604_800)
        #expect(configuration.blockCooldown == 60)
        #expect(configuration.upstreamRate == 1)
        #expect(configuration.upstreamBurst == 3)
        #expect(configuration.upstreamConcurrency == 2)
        #expect(configuration.upstreamRetries == 2)
        #expect(configuration.requestTimeout == 30)
        #expect(configuration.limits == RequestLimits())
        #expect(configuration == ServerConfiguration(environment: ["HOME": "/home/ada"], processorCount: 4))
    }

    @Test(arguments: [
        (["XDG_CACHE_HOME": "/var/cache/ada", "HOME": "/home/ada"], "/var/cache/ada/themet"),
        (["XDG_CACHE_HOME": "", "HOME": "/home/ada"], "/home/ada/.cache/themet"),
        (["HOME": "/home/ada"], "/home/ada/.cache/themet"),
        (["HOME": ""], ".cache/themet"),
        ([:], ".cache/themet"),
    ])
    func defaultDataDirectoryFollowsXDGThenHome(environment: [String: String], expected: String) throws {
        #expect(try parse(environment: environment).dataDirectory == expected)
    }

    @Test(arguments: [0, 1, 16])
    func defaultLoopsAreOnePerCoreAndAtLeastOne(cores: Int) throws {
        #expect(try parse(processorCount: cores).loops == max(1, cores))
    }

    @Test func flagsOverrideEnvironmentWhichOverridesDefaults() throws {
        let environment = ["THEMET_PORT": "9000", "THEMET_HOST": "0.0.0.0", "THEMET_LOG_LEVEL": "debug"]
        let fromEnvironment = try parse(environment: environment)
        #expect(fromEnvironment.port == 9000)
        #expect(fromEnvironment.host == "0.0.0.0")
        #expect(fromEnvironment.logLevel == .debug)

        let withFlags = try parse(["--port", "9001", "--log-level=warning"], environment: environment)
        #expect(withFlags.port == 9001)
        #expect(withFlags.logLevel == .warning)
        #expect(withFlags.host == "0.0.0.0")
    }

    @Test func theLastOfARepeatedFlagWins() throws {
        #expect(try parse(["--port", "1", "--port=2"]).port == 2)
    }

    @Test(arguments: [["--port", "8123"], ["--port=8123"]])
    func flagValueMayFollowWithASpaceOrAnEqualsSign(arguments: [String]) throws {
        #expect(try parse(arguments).port == 8123)
    }

    @Test func aValueMayContainAnEqualsSign() throws {
        #expect(try parse(["--data-dir=state=1"]).dataDirectory == "state=1")
    }

    @Test func everyOptionSetsItsField() throws {
        let configuration = try parse([
            "--host", "::1", "--port", "0", "--upstream", "fixtures", "--data-dir", "state", "--loops", "3",
            "--cache-size", "64KiB", "--upstream-timeout", "250ms", "--idle-timeout", "5m", "--shutdown-timeout", "0",
            "--cors-origin", "https://app.example", "--log-level", "ERROR", "--object-ttl", "2h", "--list-ttl", "30",
            "--departments-ttl", "7d", "--not-found-ttl", "1.5", "--stale-if-error", "0", "--block-cooldown", "90s",
            "--max-uri-length", "1K", "--max-header-size", "2KiB", "--max-body-size", "0", "--request-timeout", "45s",
            "--upstream-rate", "0.5", "--upstream-burst", "5", "--upstream-concurrency", "4", "--upstream-retries", "0",
            "--search-api", "v1.1", "--search-ttl", "10m", "--widget-objects", "5", "--detail-url",
            "https://app.example/objects/{id}", "--public-url", "https://met.example/", "--read-timeout",
            "1500ms", "--max-connections", "4",
        ])
        #expect(configuration.host == "::1")
        #expect(configuration.port == 0)
        #expect(configuration.upstream == .directory("fixtures"))
        #expect(configuration.dataDirectory == "state")
        #expect(configuration.loops == 3)
        #expect(configuration.cacheSize == 65_536)
        #expect(configuration.upstreamTimeout == 0.25)
        #expect(configuration.idleTimeout == 300)
        #expect(configuration.readTimeout == 1.5)
        #expect(configuration.maxConnections == 4)
        #expect(configuration.shutdownTimeout == 0)
        #expect(configuration.cors == .origins(["https://app.example"]))
        #expect(configuration.logLevel == .error)
        #expect(configuration.freshness.object == 7_200)
        #expect(configuration.freshness.objectList == 30)
        #expect(configuration.freshness.departments == 604_800)
        #expect(configuration.freshness.notFound == 1.5)
        #expect(configuration.freshness.staleIfError == 0)
        #expect(configuration.blockCooldown == 90)
        #expect(configuration.limits.maxURILength == 1_024)
        #expect(configuration.limits.maxHeaderBytes == 2_048)
        #expect(configuration.limits.maxBodyBytes == 0)
        #expect(configuration.requestTimeout == 45)
        #expect(configuration.upstreamRate == 0.5)
        #expect(configuration.upstreamBurst == 5)
        #expect(configuration.upstreamConcurrency == 4)
        #expect(configuration.upstreamRetries == 0)
        #expect(configuration.searchAPI == .v1_1)
        #expect(configuration.freshness.search == 600)
        #expect(configuration.widgetObjects == 5)
        #expect(configuration.detailURL == "https://app.example/objects/{id}")
        #expect(configuration.publicURL == "https://met.example")
    }

    /// One bad value per option; the test below fails if an option is added without one.
    static let badValues: [String: String] = [
        "--host": "not a host!",
        "--port": "65536",
        "--upstream": "http://example.org/some/path",
        "--data-dir": "",
        "--loops": "0",
        "--cache-size": "1K",
        "--disk-cache-size": "512KiB",
        "--admin-token": "short",
        "--redis": "http://127.0.0.1:6379",
        "--redis-prefix": "two words",
        "--redis-timeout": "20s",
        "--redis-fallback-rate": "0",
        "--sync-interval": "soon",
        "--upstream-timeout": "0",
        "--upstream-connect-timeout": "0",
        "--upstream-max-body": "1K",
        "--idle-timeout": "0.5",
        "--shutdown-timeout": "-1",
        "--cors-origin": "two words",
        "--log-level": "verbose",
        "--log-format": "xml",
        "--access-log": "",
        "--object-ttl": "soon",
        "--list-ttl": "-5m",
        "--departments-ttl": "2y",
        "--not-found-ttl": "1h30m",
        "--stale-if-error": "366d",
        "--stale-while-revalidate": "366d",
        "--block-cooldown": "0",
        "--max-uri-length": "100",
        "--max-header-size": "2M",
        "--max-body-size": "17M",
        "--request-timeout": "0",
        "--upstream-rate": "0",
        "--upstream-burst": "0",
        "--upstream-concurrency": "65",
        "--upstream-retries": "-1",
        "--search-api": "v2",
        "--search-ttl": "2y",
        "--widget-objects": "0",
        "--detail-url": "javascript:alert(1)",
        "--public-url": "ftp://x",
        "--read-timeout": "0",
        "--max-connections": "0",
        "--client-queue": "0",
        "--trusted-proxy": "10.0.0.1/8",
        "--forwarded-field": "x-real-ip",
        "--redis-secret": "short",
        "--redis-secret-file": "",
    ]

    @Test(arguments: ServerConfiguration.options.map(\.flag))
    func aBadFlagValueIsAnErrorNamingTheFlag(flag: String) throws {
        let bad = try #require(Self.badValues[flag], "no bad value listed for \(flag)")
        let error = #expect(throws: ConfigurationError.self) { try parse([flag, bad]) }
        #expect(error?.flag == flag)
        #expect(error?.description.hasPrefix("\(flag): ") == true)
        if flag == "--admin-token" || flag == "--redis-secret" {
            #expect(error?.reason.contains(bad) == false)  // a secret, even a wrong one, is never echoed
        } else {
            #expect(error?.reason.contains("'\(bad)'") == true || bad.isEmpty)
        }
    }

    @Test(arguments: [
        ("--widget-objects", "0"), ("--widget-objects", "101"), ("--widget-objects", "-5"),
        ("--widget-objects", "ten"), ("--detail-url", "javascript:alert(1)"), ("--detail-url", "/objects/"),
        ("--detail-url", "/objects/{id}/{id}"), ("--detail-url", "/objects/{ID}"), ("--detail-url", "/objects/{id}{"),
        ("--detail-url", "//evil.example/{id}"), ("--detail-url", "ftp://x/{id}"), ("--detail-url", "https:///{id}"),
        ("--detail-url", "https://user@app.example/{id}"), ("--detail-url", "/objects/{id}\r\nSet-Cookie: a=b"),
        ("--detail-url", "/objects /{id}"), ("--detail-url", "objects/{id}"), ("--detail-url", ""),
        ("--public-url", "ftp://x"), ("--public-url", "/themet"), ("--public-url", "met.example"),
        ("--public-url", "https://"), ("--public-url", "https://met.example/?a=1"),
        ("--public-url", "https://met.example/#top"), ("--public-url", "https://met.example/{id}"),
        ("--public-url", "https://met.example\r\nX: y"), ("--public-url", "javascript:alert(1)"),
        ("--public-url", ""),
    ])
    func theWidgetAndDeepLinkOptionsRefuseUnsafeValues(flag: String, value: String) {
        let error = #expect(throws: ConfigurationError.self) { try parse([flag, value]) }
        #expect(error?.flag == flag)
    }

    @Test(arguments: [
        ("--detail-url", "/objects/{id}", "/objects/{id}"),
        (
            "--detail-url", "https://app.example/objects/{id}?from=widget",
            "https://app.example/objects/{id}?from=widget"
        ),
        ("--detail-url", "HTTP://127.0.0.1:3000/{id}", "HTTP://127.0.0.1:3000/{id}"),
        ("--public-url", "https://met.example", "https://met.example"),
        ("--public-url", "https://met.example//", "https://met.example"),
        ("--public-url", "http://127.0.0.1:8080/themet/", "http://127.0.0.1:8080/themet"),
    ])
    func theWidgetAndDeepLinkOptionsKeepSafeValues(flag: String, value: String, kept: String) throws {
        let configuration = try parse([flag, value])
        #expect((flag == "--detail-url" ? configuration.detailURL : configuration.publicURL) == kept)
    }

    @Test func theWidgetAndDeepLinkDefaults() throws {
        let configuration = try parse()
        #expect(configuration.widgetObjects == 30)
        #expect(configuration.detailURL == "/objects/{id}")
        #expect(configuration.publicURL == nil)
        #expect(try parse(["--widget-objects", "1"]).widgetObjects == 1)
        #expect(try parse(environment: ["THEMET_WIDGET_OBJECTS": "100"]).widgetObjects == 100)
    }

    @Test(arguments: ServerConfiguration.options.map(\.flag))
    func aBadEnvironmentValueIsAnErrorNamingTheFlagAndTheVariable(flag: String) throws {
        let option = try #require(ServerConfiguration.options.first { $0.flag == flag })
        let bad = try #require(Self.badValues[option.flag], "no bad value listed for \(option.flag)")
        let error = #expect(throws: ConfigurationError.self) {
            try parse(environment: [option.environmentVariable: bad])
        }
        #expect(error?.flag == option.flag)
        #expect(error?.reason.contains(option.environmentVariable) == true)
    }

    @Test func aFlagOverridesABadEnvironmentValue() throws {
        #expect(try parse(["--port", "0"], environment: ["THEMET_PORT": "abc"]).port == 0)
        #expect(try parse(["--port=1"], environment: ["THEMET_PORT": "abc"]).port == 1)
        // Another flag does not: the variable still fails, naming itself.
        #expect(
            throws: ConfigurationError(
                flag: "--port", reason: "expected an integer from 0 to 65535, got 'x' (from THEMET_PORT)")
        ) {
            try parse(["--loops", "1"], environment: ["THEMET_PORT": "x"])
        }
    }

    @Test func doubleDashEndsTheFlagsAndNothingMayFollowIt() throws {
        #expect(try parse(["--port", "1", "--"]).port == 1)
        #expect(throws: ConfigurationError(flag: "x", reason: "unexpected argument; the server takes flags only")) {
            try parse(["--", "x"])
        }
    }

    @Test(arguments: [
        ("--data-dir", "THEMET_DATA_DIR"),
        ("--port", "THEMET_PORT"),
        ("--upstream-timeout", "THEMET_UPSTREAM_TIMEOUT"),
        ("--max-header-size", "THEMET_MAX_HEADER_SIZE"),
        ("--stale-if-error", "THEMET_STALE_IF_ERROR"),
    ])
    func environmentVariableIsThePrefixedUpperSnakeFlag(flag: String, variable: String) throws {
        let option = try #require(ServerConfiguration.options.first { $0.flag == flag })
        #expect(option.environmentVariable == variable)
    }

    @Test func everyOptionHasAUniqueFlagAndVariable() {
        let flags = ServerConfiguration.options.map(\.flag)
        let variables = ServerConfiguration.options.map(\.environmentVariable)
        #expect(Set(flags).count == flags.count)
        #expect(Set(variables).count == variables.count)
        #expect(flags.allSatisfy { $0.hasPrefix("--") })
        #expect(variables.allSatisfy { $0.hasPrefix("THEMET_") && !$0.contains("-") && $0 == $0.uppercased() })
    }

    @Test func dataDirectoryComesFromTHEMET_DATA_DIR() throws {
        #expect(try parse(environment: ["THEMET_DATA_DIR": "state", "HOME": "/home/ada"]).dataDirectory == "state")
    }

    @Test func unrelatedEnvironmentVariablesAreIgnored() throws {
        #expect(try parse(environment: ["THEMET_UNKNOWN": "1", "PORT": "1"]).port == 8080)
    }

    @Test(arguments: ["--nope", "--nope=1", "--PORT"])
    func anUnknownFlagIsAnError(argument: String) {
        let error = #expect(throws: ConfigurationError.self) { try parse([argument]) }
        #expect(error?.flag == String(argument.prefix { $0 != "=" }))
        #expect(error?.reason.contains("unknown flag") == true)
    }

    @Test func aBareArgumentIsAnError() {
        let error = #expect(throws: ConfigurationError.self) { try parse(["serve"]) }
        #expect(error?.flag == "serve")
    }

    @Test(arguments: ServerConfiguration.options.map(\.flag))
    func aFlagWithoutItsValueIsAnError(flag: String) {
        let error = #expect(throws: ConfigurationError.self) { try parse(["--port", "1", flag]) }
        #expect(error?.flag == flag)
        #expect(error?.reason.contains("needs a value") == true)
    }

    @Test(arguments: [
        ("30", 30.0), ("1.5", 1.5), ("30s", 30), ("250ms", 0.25), ("5m", 300), ("2h", 7_200), ("7d", 604_800),
        ("0", 0), ("0.5m", 30),
    ])
    func durationsAcceptUnits(text: String, seconds: Double) {
        #expect(ServerConfiguration.parseDuration(text) == seconds)
    }

    @Test(arguments: ["", "s", "ms", "-1", "-5m", "1h30m", "2y", "five", "inf", "nan", " 5", "5 m"])
    func malformedDurationsAreRejected(text: String) {
        #expect(ServerConfiguration.parseDuration(text) == nil)
    }

    @Test(arguments: [
        ("4096", 4_096), ("12B", 12), ("64K", 65_536), ("64k", 65_536), ("64KB", 65_536), ("64KiB", 65_536),
        ("256MiB", 268_435_456), ("256M", 268_435_456), ("1G", 1_073_741_824), ("1GiB", 1_073_741_824),
    ])
    func sizesAcceptBinarySuffixes(text: String, bytes: Int) {
        #expect(ServerConfiguration.parseByteSize(text) == bytes)
    }

    @Test(arguments: ["", "K", "KiB", "-1", "1.5M", "1T", "lots", "99999999999999999999G", "9223372036854775807K"])
    func malformedSizesAreRejected(text: String) {
        #expect(ServerConfiguration.parseByteSize(text) == nil)
    }

    @Test(arguments: [
        ("https://collectionapi.metmuseum.org", "https://collectionapi.metmuseum.org"),
        ("https://collectionapi.metmuseum.org/", "https://collectionapi.metmuseum.org"),
        ("https://collectionapi.metmuseum.org/public/collection/v1", "https://collectionapi.metmuseum.org"),
        ("https://collectionapi.metmuseum.org/public/collection/v1/", "https://collectionapi.metmuseum.org"),
        ("https://collectionapi.metmuseum.org/public/collection/v1.1", "https://collectionapi.metmuseum.org"),
        ("http://127.0.0.1:8081//", "http://127.0.0.1:8081"),
        ("HTTP://LOCALHOST:9", "HTTP://LOCALHOST:9"),
    ])
    func upstreamOriginsAreNormalised(value: String, origin: String) throws {
        #expect(try parse(["--upstream", value]).upstream == .origin(origin))
    }

    @Test(arguments: ["Fixtures", "./Fixtures", "/srv/met-fixtures", "ftp.example.org"])
    func anUpstreamThatIsNotHTTPIsADirectory(value: String) throws {
        #expect(try parse(["--upstream", value]).upstream == .directory(value))
    }

    @Test(arguments: [
        "", "http://", "https://", "http://user@host", "http://host/path", "http://host?x=1", "https://host#top",
    ])
    func unusableUpstreamOriginsAreRejected(value: String) {
        let error = #expect(throws: ConfigurationError.self) { try parse(["--upstream=\(value)"]) }
        #expect(error?.flag == "--upstream")
    }
}

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
        "--redis-fallback-rate", "--trusted-proxy", "--redis-secret", "--redis-secret-file",
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
        #expect(defaults.dataDirectory == "/home/ada/.cache/themet")
        let xdg = try ServerConfiguration.parse(
            arguments: [], environment: ["XDG_CACHE_HOME": "/xdg", "HOME": "/home/ada"], processorCount: 1)
        #expect(xdg.dataDirectory == "/xdg/themet")

        #expect(text("--loops") == "one per core")
        #expect(defaults.loops == Self.processorCount)

        // nil: the server works the limit out when it starts.
        #expect(text("--max-connections") == "descriptor limit - 128")
        #expect(defaults.maxConnections == nil)

        #expect(text("--public-url") == "none (relative links)")
        #expect(defaults.publicURL == nil)

        #expect(text("--admin-token") == "none (clients on this machine only)")
        #expect(defaults.adminToken == nil)

        #expect(text("--trusted-proxy") == "none")
        #expect(defaults.trustedProxies == .none)

        #expect(text("--redis-secret") == "none (Redis writers are trusted)")
        #expect(text("--redis-secret-file") == "none")
        #expect(defaults.redisSecret == nil && defaults.redisSecretFile == nil)

        #expect(text("--redis") == "none")
        #expect(defaults.redis == nil)

        #expect(text("--redis-fallback-rate") == "a quarter of --upstream-rate")
        #expect(defaults.redisFallbackRate == nil)
        #expect(defaults.fallbackRate == defaults.upstreamRate / 4)
    }

    @Test(arguments: ServerConfiguration.options.map(\.flag).filter { !describedDefaults.contains($0) })
    func theReadmeShowsTheSameDefault(flag: String) throws {
        let option = try #require(ServerConfiguration.options.first { $0.flag == flag })
        #expect(
            ReadmeConfigurationTableTests.readme.contains(
                "| `\(flag)` | `\(option.environmentVariable)` | `\(option.defaultText)` |"))
    }
}
