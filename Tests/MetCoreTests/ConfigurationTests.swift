import Foundation
import Testing

@testable import MetCore
@testable import MetEngine

@Suite("Configuration parsing")
struct ConfigurationTests {
    private func parse(_ arguments: [String] = [], environment: [String: String] = [:], processorCount: Int = 4)
        throws(ConfigurationError) -> ServerConfiguration
    {
        try ServerConfiguration.parse(arguments: arguments, environment: environment, processorCount: processorCount)
    }

    @Test func noFlagsAndNoEnvironmentGiveTheDefaults() throws {
        let configuration = try parse(environment: ["HOME": "/home/ada"], processorCount: 4)
        #expect(configuration.http.host == "127.0.0.1")
        #expect(configuration.http.port == 8080)
        #expect(configuration.upstream.location == .origin("https://collectionapi.metmuseum.org"))
        #expect(configuration.cache.dataDirectory == "/home/ada/.cache/themet")
        #expect(configuration.http.loops == 4)
        #expect(configuration.cache.memorySize == 256 * 1_048_576)
        #expect(configuration.upstream.timeout == 10)
        #expect(configuration.http.idleTimeout == 60)
        #expect(configuration.http.readTimeout == 10)
        #expect(configuration.http.maxConnections == nil)
        #expect(configuration.http.shutdownTimeout == 10)
        #expect(configuration.access.cors == .any)
        #expect(configuration.logging.level == .info)
        #expect(configuration.cache.freshness == FreshnessPolicy())
        #expect(configuration.cache.freshness.object == 2_592_000)
        #expect(configuration.cache.syncInterval == 86_400)
        #expect(configuration.cache.freshness.objectList == 3_600)
        #expect(configuration.cache.freshness.departments == 604_800)
        #expect(configuration.cache.freshness.notFound == 3_600)
        #expect(configuration.cache.freshness.staleIfError == 604_800)
        #expect(configuration.upstream.blockCooldown == 60)
        #expect(configuration.upstream.rate == 1)
        #expect(configuration.upstream.burst == 3)
        #expect(configuration.upstream.concurrency == 2)
        #expect(configuration.upstream.retries == 2)
        #expect(configuration.upstream.requestTimeout == 30)
        #expect(configuration.http.limits == RequestLimits())
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
        #expect(try parse(environment: environment).cache.dataDirectory == expected)
    }

    @Test(arguments: [0, 1, 16])
    func defaultLoopsAreOnePerCoreAndAtLeastOne(cores: Int) throws {
        #expect(try parse(processorCount: cores).http.loops == max(1, cores))
    }

    @Test func flagsOverrideEnvironmentWhichOverridesDefaults() throws {
        let environment = ["THEMET_PORT": "9000", "THEMET_HOST": "0.0.0.0", "THEMET_LOG_LEVEL": "debug"]
        let fromEnvironment = try parse(environment: environment)
        #expect(fromEnvironment.http.port == 9000)
        #expect(fromEnvironment.http.host == "0.0.0.0")
        #expect(fromEnvironment.logging.level == .debug)

        let withFlags = try parse(["--port", "9001", "--log-level=warning"], environment: environment)
        #expect(withFlags.http.port == 9001)
        #expect(withFlags.logging.level == .warning)
        #expect(withFlags.http.host == "0.0.0.0")
    }

    @Test func theLastOfARepeatedFlagWins() throws {
        #expect(try parse(["--port", "1", "--port=2"]).http.port == 2)
    }

    @Test(arguments: [["--port", "8123"], ["--port=8123"]])
    func flagValueMayFollowWithASpaceOrAnEqualsSign(arguments: [String]) throws {
        #expect(try parse(arguments).http.port == 8123)
    }

    @Test func aValueMayContainAnEqualsSign() throws {
        #expect(try parse(["--data-dir=state=1"]).cache.dataDirectory == "state=1")
    }

    @Test func everyOptionSetsItsField() throws {
        let configuration = try parse([
            "--host", "::1", "--port", "0", "--upstream", "fixtures", "--data-dir", "state", "--loops", "3",
            "--cache-size", "64KiB", "--upstream-timeout", "250ms", "--idle-timeout", "5m", "--shutdown-timeout", "0",
            "--cors-origin", "https://app.example", "--log-level", "ERROR", "--object-ttl", "2h", "--list-ttl", "30",
            "--departments-ttl", "7d", "--not-found-ttl", "1.5", "--stale-if-error", "0", "--block-cooldown", "90s",
            "--max-uri-length", "1K", "--max-header-size", "2KiB", "--max-body-size", "0", "--request-timeout", "45s",
            "--upstream-rate", "0.5", "--upstream-burst", "5", "--upstream-concurrency", "4", "--upstream-retries", "0",
            "--search-api", "v1.1", "--search-fallback", "off", "--search-ttl", "10m", "--widget-objects", "5",
            "--detail-url",
            "https://app.example/objects/{id}", "--public-url", "https://met.example/", "--read-timeout",
            "1500ms", "--max-connections", "4",
        ])
        #expect(configuration.http.host == "::1")
        #expect(configuration.http.port == 0)
        #expect(configuration.upstream.location == .directory("fixtures"))
        #expect(configuration.cache.dataDirectory == "state")
        #expect(configuration.http.loops == 3)
        #expect(configuration.cache.memorySize == 65_536)
        #expect(configuration.upstream.timeout == 0.25)
        #expect(configuration.http.idleTimeout == 300)
        #expect(configuration.http.readTimeout == 1.5)
        #expect(configuration.http.maxConnections == 4)
        #expect(configuration.http.shutdownTimeout == 0)
        #expect(configuration.access.cors == .origins(["https://app.example"]))
        #expect(configuration.logging.level == .error)
        #expect(configuration.cache.freshness.object == 7_200)
        #expect(configuration.cache.freshness.objectList == 30)
        #expect(configuration.cache.freshness.departments == 604_800)
        #expect(configuration.cache.freshness.notFound == 1.5)
        #expect(configuration.cache.freshness.staleIfError == 0)
        #expect(configuration.upstream.blockCooldown == 90)
        #expect(configuration.http.limits.maxURILength == 1_024)
        #expect(configuration.http.limits.maxHeaderBytes == 2_048)
        #expect(configuration.http.limits.maxBodyBytes == 0)
        #expect(configuration.upstream.requestTimeout == 45)
        #expect(configuration.upstream.rate == 0.5)
        #expect(configuration.upstream.burst == 5)
        #expect(configuration.upstream.concurrency == 4)
        #expect(configuration.upstream.retries == 0)
        #expect(configuration.upstream.searchAPI == .v1_1)
        #expect(!configuration.upstream.searchFallback)
        #expect(configuration.cache.freshness.search == 600)
        #expect(configuration.presentation.widgetObjects == 5)
        #expect(configuration.presentation.detailURL == "https://app.example/objects/{id}")
        #expect(configuration.presentation.publicURL == "https://met.example")
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
        "--image-upstream": "https://images.example/CRDImages",
        "--image-rate": "0",
        "--image-burst": "0",
        "--image-concurrency": "65",
        "--image-derivations": "0",
        "--image-max-bytes": "1K",
        "--image-max-pixels": "0",
        "--image-cache-size": "1K",
        "--image-memory-size": "1K",
        "--upstream-retries": "-1",
        "--search-api": "v2",
        "--search-fallback": "remote",
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
        #expect(
            (flag == "--detail-url" ? configuration.presentation.detailURL : configuration.presentation.publicURL)
                == kept)
    }

    @Test func theWidgetAndDeepLinkDefaults() throws {
        let configuration = try parse()
        #expect(configuration.presentation.widgetObjects == 30)
        #expect(configuration.presentation.detailURL == "/objects/{id}")
        #expect(configuration.presentation.publicURL == nil)
        #expect(try parse(["--widget-objects", "1"]).presentation.widgetObjects == 1)
        #expect(try parse(environment: ["THEMET_WIDGET_OBJECTS": "100"]).presentation.widgetObjects == 100)
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
        #expect(try parse(["--port", "0"], environment: ["THEMET_PORT": "abc"]).http.port == 0)
        #expect(try parse(["--port=1"], environment: ["THEMET_PORT": "abc"]).http.port == 1)
        // Another flag does not: the variable still fails, naming itself.
        #expect(
            throws: ConfigurationError(
                flag: "--port", reason: "expected an integer from 0 to 65535, got 'x' (from THEMET_PORT)")
        ) {
            try parse(["--loops", "1"], environment: ["THEMET_PORT": "x"])
        }
    }

    @Test func doubleDashEndsTheFlagsAndNothingMayFollowIt() throws {
        #expect(try parse(["--port", "1", "--"]).http.port == 1)
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
        #expect(
            try parse(environment: ["THEMET_DATA_DIR": "state", "HOME": "/home/ada"]).cache.dataDirectory == "state")
    }

    @Test func unrelatedEnvironmentVariablesAreIgnored() throws {
        #expect(try parse(environment: ["THEMET_UNKNOWN": "1", "PORT": "1"]).http.port == 8080)
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
        #expect(try parse(["--upstream", value]).upstream.location == .origin(origin))
    }

    @Test(arguments: ["Fixtures", "./Fixtures", "/srv/met-fixtures", "ftp.example.org"])
    func anUpstreamThatIsNotHTTPIsADirectory(value: String) throws {
        #expect(try parse(["--upstream", value]).upstream.location == .directory(value))
    }

    @Test(arguments: [
        "", "http://", "https://", "http://user@host", "http://host/path", "http://host?x=1", "https://host#top",
    ])
    func unusableUpstreamOriginsAreRejected(value: String) {
        let error = #expect(throws: ConfigurationError.self) { try parse(["--upstream=\(value)"]) }
        #expect(error?.flag == "--upstream")
    }
}
