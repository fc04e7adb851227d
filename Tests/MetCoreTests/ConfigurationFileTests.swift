import Foundation
import Testing

@testable import MetCore
@testable import MetEngine

@Suite("Configuration files")
struct ConfigurationFileTests {
    private static func file(_ text: String, path: String = "/etc/themet/themet.conf") throws(ConfigurationError)
        -> ConfigurationFile
    {
        try ConfigurationFile(path: path, bytes: Array(text.utf8))
    }

    private static func parse(
        _ text: String, arguments: [String] = [], environment: [String: String] = [:]
    ) throws(ConfigurationError) -> ServerConfiguration {
        try ServerConfiguration.parse(
            arguments: arguments, environment: environment, processorCount: 2, file: try file(text))
    }

    @Test func linesCommentsQuotesAndLineEndings() throws {
        let text = """
            # a comment, then a blank line

              port = 9000   # a comment after a value
            host=0.0.0.0
            detail-url = https://app.example/#/objects/{id}
            \tdata-dir = "/srv/the met "  # quoted: kept whole
            redis-prefix = 'themet#2'\r
            cors-origin = https://a.example
            """
        let settings = try Self.file(text).settings
        #expect(
            settings.map(\.option) == [
                "--port", "--host", "--detail-url", "--data-dir", "--redis-prefix", "--cors-origin",
            ])
        #expect(
            settings.map(\.value) == [
                "9000", "0.0.0.0", "https://app.example/#/objects/{id}", "/srv/the met ", "themet#2",
                "https://a.example",
            ])
        #expect(settings.map(\.line) == [3, 4, 5, 6, 7, 8])
        let configuration = try Self.parse(text)
        #expect(configuration.http.port == 9000 && configuration.http.host == "0.0.0.0")
        #expect(configuration.presentation.detailURL == "https://app.example/#/objects/{id}")
        #expect(configuration.redis.prefix == "themet#2" && configuration.cache.dataDirectory == "/srv/the met ")
    }

    /// Each line breaks a rule: refused, naming the file, the line and (where there is one) the name.
    @Test(arguments: [
        ("port 9000", "/etc/themet/themet.conf:2: expected name = value, got 'port 9000'"),
        ("= 9000", "/etc/themet/themet.conf:2: a value without a name"),
        ("--port = 9000", "/etc/themet/themet.conf:2: --port: names are written without their dashes (port = …)"),
        ("prot = 9000", "/etc/themet/themet.conf:2: prot: no such setting; themet --help lists them by their flags"),
        ("config = other.conf", "/etc/themet/themet.conf:2: config: a configuration file cannot name another"),
        ("host = 127.0.0.1", "/etc/themet/themet.conf:2: host: set twice (first on line 1)"),
        ("port = \"9000", "/etc/themet/themet.conf:2: port: no closing \""),
        ("port = '9000' 1", "/etc/themet/themet.conf:2: port: only a comment may follow a quoted value, got '1'"),
        ("port = 90\u{0}00", "/etc/themet/themet.conf:2: a control character; a line is name = value"),
        ("port = 9000\rhost = x", "/etc/themet/themet.conf:2: a control character; a line is name = value"),
    ])
    func aLineThatBreaksARuleIsRefusedWithItsPlace(line: String, message: String) {
        let error = #expect(throws: ConfigurationError.self) { try Self.file("host = 127.0.0.1\n" + line + "\n") }
        #expect(error?.description == message)
    }

    /// Read by Unicode scalars: a mark that makes one Character of itself and a quote, `=` or `#`
    /// (U+0605 prepends itself to what follows, U+0301 combines with what precedes) hides none.
    @Test func marksBesideQuotesAndSignsHideNothing() throws {
        let prepended = try Self.file("redis-prefix = \"rv\u{605}\"\n").settings
        #expect(prepended.map(\.value) == ["rv\u{605}"])
        let combined = try Self.file("redis-prefix = x #\u{301} a comment\nport =\u{301} 1\n").settings
        #expect(combined.map(\.value) == ["x", "\u{301} 1"])
        let error = #expect(throws: ConfigurationError.self) { try Self.file("port = \"1\"\u{301}\n") }
        #expect(error?.reason.hasPrefix("only a comment may follow a quoted value") == true)
    }

    /// A comment straight after `=` leaves the value empty; a byte order mark is skipped.
    @Test func aCommentAfterTheEqualsSignAndAByteOrderMark() throws {
        #expect(try Self.file("access-log =   # later\n").settings.map(\.value) == [""])
        #expect(try Self.file("access-log =\t# later\n").settings.map(\.value) == [""])
        let marked = try ConfigurationFile(path: "/x.conf", bytes: [0xEF, 0xBB, 0xBF] + Array("# c\nport = 1\n".utf8))
        #expect(marked.settings.map(\.option) == ["--port"] && marked.settings.first?.line == 2)
    }

    /// --redis-secret and --redis-secret-file name one secret: the higher level's wins; at one
    /// level both stay, and `groupSecret` says they conflict.
    @Test func oneSecretNamedTwoWaysIsTheHigherLevelsOne() throws {
        let secret = "a-secret-of-twenty-chars"
        let fromFile = try Self.parse(
            "redis-secret-file = /etc/themet/redis-secret\n", environment: ["THEMET_REDIS_SECRET": secret])
        #expect(fromFile.redis.secret == secret && fromFile.redis.secretFile == nil)
        #expect(try fromFile.groupSecret() == secret)
        let byFlag = try Self.parse("redis-secret = \(secret)\n", arguments: ["--redis-secret-file", "/run/secret"])
        #expect(byFlag.redis.secret == nil && byFlag.redis.secretFile == "/run/secret")
        let both = try ServerConfiguration.parse(
            arguments: ["--redis-secret", secret, "--redis-secret-file", "/run/secret"], environment: [:],
            processorCount: 1)
        #expect(throws: ConfigurationError.self) { try both.groupSecret() }
    }

    @Test func notUTF8OrTooLargeIsRefused() {
        #expect(throws: ConfigurationError(flag: "--config", reason: "/x.conf is not UTF-8 text")) {
            try ConfigurationFile(path: "/x.conf", bytes: Array("port = 1\n".utf8) + [0xFF, 0xFE])
        }
        let large = [UInt8](repeating: UInt8(ascii: "#"), count: ConfigurationFile.maxBytes + 1)
        #expect(throws: ConfigurationError.self) { try ConfigurationFile(path: "/x.conf", bytes: large) }
    }

    @Test func aBadValueNamesTheFileLineAndSetting() {
        let error = #expect(throws: ConfigurationError.self) { try Self.parse("# port\nport = 65536\n") }
        #expect(
            error?.description == "/etc/themet/themet.conf:2: port: expected an integer from 0 to 65535, got '65536'")
    }

    /// Flags over variables over the file over defaults; a bad value in the file is no error
    /// when a variable or a flag gives that setting.
    @Test func precedenceIsFlagThenVariableThenFileThenDefault() throws {
        let text = "port = 9000\nhost = ::1\nlog-level = error\n"
        let configuration = try Self.parse(
            text, arguments: ["--port", "9100"], environment: ["THEMET_HOST": "0.0.0.0"])
        #expect(configuration.http.port == 9100)
        #expect(configuration.http.host == "0.0.0.0")
        #expect(configuration.logging.level == .error)
        #expect(configuration.http.loops == 2)
        #expect(try Self.parse("port = x\n", arguments: ["--port", "1"]).http.port == 1)
        #expect(try Self.parse("port = x\n", environment: ["THEMET_PORT": "2"]).http.port == 2)
        // A bad variable over a good file still fails, naming the variable.
        let error = #expect(throws: ConfigurationError.self) {
            try Self.parse("port = 3\n", environment: ["THEMET_PORT": "x"])
        }
        #expect(error?.flag == "--port" && error?.reason.contains("THEMET_PORT") == true)
        // Where each value came from.
        let resolved = try ServerConfiguration.resolve(
            arguments: ["--port", "9100"], environment: ["THEMET_HOST": "0.0.0.0"], processorCount: 2,
            file: try Self.file(text))
        #expect(resolved.origins["--port"] == SettingOrigin(value: "9100", source: .flag))
        #expect(resolved.origins["--host"] == SettingOrigin(value: "0.0.0.0", source: .environment("THEMET_HOST")))
        #expect(
            resolved.origins["--log-level"]
                == SettingOrigin(value: "error", source: .file(path: "/etc/themet/themet.conf", line: 3)))
        #expect(resolved.origins["--loops"] == nil)
    }

    /// Every option can be set from a file, to what its flag sets: one good value each (the walk
    /// fails when an option is added without one).
    @Test(arguments: ServerConfiguration.options.map(\.flag))
    func everyOptionIsSettableFromAFileAsByItsFlag(flag: String) throws {
        let value = try #require(Self.goodValues[flag], "no good value listed for \(flag)")
        let byFlag = try ServerConfiguration.parse(arguments: [flag, value], environment: [:], processorCount: 2)
        let line = "\(flag.dropFirst(2)) = \"\(value)\"\n"
        #expect(try Self.parse(line) == byFlag)
        #expect(
            byFlag != (try ServerConfiguration.parse(arguments: [], environment: [:], processorCount: 2)), "\(flag)")
    }

    /// A value for each option that is not its default.
    static let goodValues: [String: String] = [
        "--host": "0.0.0.0", "--port": "9000", "--upstream": "http://127.0.0.1:9", "--data-dir": "/var/lib/themet",
        "--loops": "3", "--cache-size": "64MiB", "--disk-cache-size": "2GiB",
        "--admin-token": "a-token-of-twenty-chars",
        "--redis": "redis://127.0.0.1:6379", "--redis-prefix": "group2", "--redis-timeout": "250ms",
        "--redis-fallback-rate": "0.5", "--sync-interval": "6h", "--upstream-timeout": "5s",
        "--upstream-connect-timeout": "2s", "--upstream-max-body": "8MiB", "--idle-timeout": "30s",
        "--shutdown-timeout": "2s", "--cors-origin": "https://app.example", "--log-level": "debug",
        "--log-format": "json", "--access-log": "/var/log/themet/access.log", "--object-ttl": "2h",
        "--list-ttl": "30m", "--departments-ttl": "1d", "--not-found-ttl": "5m", "--stale-if-error": "1d",
        "--stale-while-revalidate": "1h", "--block-cooldown": "90s", "--max-uri-length": "4K",
        "--max-header-size": "32K", "--max-body-size": "0", "--request-timeout": "45s", "--upstream-rate": "0.5",
        "--upstream-burst": "5", "--upstream-concurrency": "4", "--image-upstream": "http://127.0.0.1:10",
        "--image-rate": "2", "--image-burst": "4", "--image-concurrency": "3", "--image-derivations": "3",
        "--image-max-bytes": "16MiB", "--image-max-pixels": "1000000", "--image-cache-size": "1GiB",
        "--image-memory-size": "32MiB", "--upstream-retries": "1", "--search-api": "v1.1", "--search-fallback": "off",
        "--search-ttl": "10m", "--widget-objects": "5", "--detail-url": "https://app.example/objects/{id}",
        "--public-url": "https://met.example", "--read-timeout": "5s", "--max-connections": "100",
        "--client-queue": "4", "--trusted-proxy": "10.0.0.0/8", "--forwarded-field": "forwarded",
        "--redis-secret": "a-secret-of-twenty-chars", "--redis-secret-file": "/etc/themet/redis-secret",
    ]

    @Test func theFileIsTheNamedOneElseTHEMET_CONFIGElseTheFirstDefaultThatExists() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("config-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let named = directory.appendingPathComponent("named.conf").path
        try Data("port = 1\n".utf8).write(to: URL(fileURLWithPath: named))
        let home = directory.appendingPathComponent("home").path
        try FileManager.default.createDirectory(atPath: home + "/themet", withIntermediateDirectories: true)
        try Data("port = 2\n".utf8).write(to: URL(fileURLWithPath: home + "/themet/themet.conf"))
        let environment = ["XDG_CONFIG_HOME": home, "THEMET_CONFIG": named]

        func port(_ arguments: [String], _ environment: [String: String]) throws -> String? {
            try ConfigurationFile.load(arguments: arguments, environment: environment)?.settings.first?.value
        }
        #expect(try port(["--config", named], [:]) == "1")
        #expect(try port(["--config=" + named], ["XDG_CONFIG_HOME": home]) == "1")
        #expect(try port([], environment) == "1")
        #expect(try port([], ["XDG_CONFIG_HOME": home]) == "2")
        #expect(try port(["--config", ""], ["XDG_CONFIG_HOME": home]) == nil)
        #expect(try port(["--", "--config", named], ["XDG_CONFIG_HOME": directory.path]) == nil)
        let missing = #expect(throws: ConfigurationError.self) {
            try ConfigurationFile.load(arguments: ["--config", directory.path + "/nope.conf"], environment: [:])
        }
        #expect(missing?.description == "--config: cannot read \(directory.path)/nope.conf: No such file or directory")
        #expect(
            ConfigurationFile.defaultPaths(environment: ["HOME": "/home/ada"])
                == ["/home/ada/.config/themet/themet.conf", "/etc/themet/themet.conf"])
        // The flag itself is no setting: parsed past, whatever it names.
        #expect(
            try ServerConfiguration.parse(
                arguments: ["--config", named, "--port", "3"], environment: [:], processorCount: 1
            )
            .http.port == 3)
    }
}
