import Foundation
import TestKit
import Testing

/// `--config FILE` through the real binary: a server runs with the file's settings, below its
/// flags; `themet config` says where each value came from; a bad line stops it, exit 64, naming
/// its place.
@Suite("Configuration files through the real binary")
struct ConfigFileTests {
    /// A configuration file in `directory` holding `text`; its path.
    private static func write(_ text: String, in directory: TemporaryDirectory) throws -> String {
        let path = directory.path + "/themet.conf"
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    @Test func aServerRunsWithTheFilesSettingsBelowItsFlags() async throws {
        let directory = TemporaryDirectory()
        let file = try Self.write(
            """
            # what a service's file holds
            cors-origin = https://app.example
            upstream = http://127.0.0.1:9   # the flag --upstream (the fake Met) wins
            admin-token = "a-token-of-twenty-chars"

            """, in: directory)
        let servers = try await Servers.start(themet: ["--config", file])
        let allowed = try await servers.get("/objects/436535", headers: ["Origin": "https://app.example"])
        #expect(allowed.status == 200)
        #expect(allowed.header("Access-Control-Allow-Origin") == "https://app.example")
        let other = try await servers.get("/objects/436535", headers: ["Origin": "https://other.example"])
        #expect(other.header("Access-Control-Allow-Origin") == nil)
        servers.themet.signal(SIGTERM)
        #expect(await servers.themet.waitForExit() == 0)

        let printed = try await ThemetCommand.run([
            "config", "--config", file, "--port", "0", "--redis", "redis://user:p@ss@127.0.0.1:6379",
        ])
        #expect(printed.status == 0, "\(printed.errorText)")
        let text = String(decoding: printed.output, as: UTF8.self)
        for line in [
            "over \(file) over defaults)", "cors-origin = https://app.example  # \(file):2",
            "port = 0  # flag --port", "admin-token = ********  # \(file):4", "# loops: one per core",
            "upstream = http://127.0.0.1:9  # \(file):3",
            "redis = redis://user:********@127.0.0.1:6379  # flag --redis",
        ] {
            #expect(text.contains(line), "\(line) in \(text)")
        }
        #expect(!text.contains("a-token-of-twenty-chars") && !text.contains("p@ss"))
    }

    @Test func aBadLineOrAMissingFileStopsTheServerNamingItsPlace() async throws {
        let directory = TemporaryDirectory()
        let file = try Self.write("port = 0\nupstream-rate = lots\n", in: directory)
        let bad = try await ThemetCommand.run(["serve", "--config", file])
        #expect(bad.status == 64)
        #expect(
            bad.errorText
                == "themet: \(file):2: upstream-rate: expected requests per second from 0.01 to 10000, got 'lots'\n")
        let missing = try await ThemetCommand.run(["serve", "--config", directory.path + "/nope.conf"])
        #expect(missing.status == 64)
        #expect(
            missing.errorText.contains("--config: cannot read \(directory.path)/nope.conf: "), "\(missing.errorText)")
    }
}
