import Foundation
import Testing

/// `themet` as a command: help, exit statuses, `--`, standalone flags, the terminal's JSON and
/// its progress line (under a pseudo-terminal made by `script`), the pending note. Each route
/// command goes through themet's libcurl client to met-fixture-server over loopback HTTP.
// Serialized: each test starts several processes, which under ThreadSanitizer would otherwise
// crowd the two cores the timing-sensitive suites share with them.
@Suite("The command line's conventions", .serialized)
struct CommandLineTests {
    /// A fresh data directory, removed after the test.
    private static func dataDirectory() -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("themet-cli-\(UUID().uuidString)").path
    }

    /// A fake Met over HTTP, for the commands' upstream.
    private static func fake(_ arguments: [String] = []) async throws -> RunningProcess {
        try await RunningProcess(
            BuiltProducts.fixtureServer, ["--port", "0", "--fixtures", BuiltProducts.fixtures.path] + arguments)
    }

    /// `themet arguments` run on a pseudo-terminal (standard output and error both the terminal),
    /// through `script`; returns the status and what the terminal showed.
    private static func onTerminal(_ arguments: [String]) async throws -> (status: Int32, screen: String) {
        let run = try await ThemetCommand.run(
            ["-qefc", shellCommand([BuiltProducts.themet.path] + arguments), "/dev/null"],
            executable: URL(fileURLWithPath: "/usr/bin/script"))
        return (run.status, String(decoding: run.output, as: UTF8.self).replacingOccurrences(of: "\r\n", with: "\n"))
    }

    /// `arguments` as one shell command line, each single-quoted.
    private static func shellCommand(_ arguments: [String]) -> String {
        arguments.map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }.joined(separator: " ")
    }

    @Test func helpListsTheCommandsAndEachCommandHasItsOwn() async throws {
        for arguments in [["--help"], ["-h"], ["help"]] {
            let run = try await ThemetCommand.run(arguments)
            #expect(run.status == 0)
            let text = String(decoding: run.output, as: UTF8.self)
            for command in ["serve", "search", "timeline", "open", "warm", "sync", "help"] {
                #expect(text.contains("\n  \(command) "), "\(arguments): \(command)")
            }
            #expect(text.contains("--upstream-rate"))
        }
        for command in ["search", "open", "warm"] {
            let viaHelp = try await ThemetCommand.run(["help", command])
            let viaFlag = try await ThemetCommand.run([command, "--help"])
            #expect(viaHelp.status == 0 && viaFlag.status == 0)
            #expect(viaHelp.output == viaFlag.output)
            #expect(String(decoding: viaHelp.output, as: UTF8.self).hasPrefix("usage: themet \(command)"))
        }
        for arguments in [["-V"], ["--version"], ["search", "-V"]] {
            let run = try await ThemetCommand.run(arguments)
            #expect(run.status == 0)
            #expect(String(decoding: run.output, as: UTF8.self).hasPrefix("themet "))
        }
    }

    /// Every usage error: status 64, one line on standard error that says what to fix, nothing on
    /// standard output, and nothing asked of the Met.
    @Test func usageErrorsExit64WithOneReadableLine() async throws {
        let fake = try await Self.fake()
        let directory = Self.dataDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let server = ["--upstream", fake.baseURL, "--data-dir", directory]
        for (arguments, line) in [
            (["search", "cypress", "--limit", "1000"], "themet: --limit: limit must be an integer from 1 to 100."),
            (["search", "cypress", "--sort", "x"], "themet: --sort: "),
            (["search", "cypress", "--hasImages", "maybe"], "themet: "),
            (["open", "abc"], "themet: 'abc' is not an object ID"),
            (["timeline", "--family", "huge"], "themet: --family: family must be medium or large."),
            (["nope"], "themet: no command 'nope'"),
            (["search", "cypress", "--bogus", "1"], "themet: --bogus: unknown flag"),
            (["search"], "themet: QUERY: missing"),
        ] as [([String], String)] {
            let run = try await ThemetCommand.run(arguments + server)
            #expect(run.status == 64, "\(arguments): \(run.errorText)")
            #expect(run.errorText.hasPrefix(line), "\(arguments): \(run.errorText)")
            #expect(run.errorText.filter { $0 == "\n" }.count == 1, "\(arguments): \(run.errorText)")
            #expect(run.output.isEmpty)
        }
        #expect(try await HTTPClient.request(fake.baseURL + "/__stats").json()["total"] as? Int == 0)
        let help = try await ThemetCommand.run(["help", "nope"])
        #expect(help.status == 64)
        #expect(help.errorText.hasPrefix("themet: no command 'nope'"))
    }

    @Test func aFailureOfTheMetExits1WithOneLine() async throws {
        let directory = Self.dataDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let run = try await ThemetCommand.run([
            "search", "cypress", "--upstream", "http://127.0.0.1:9", "--data-dir", directory, "--upstream-retries", "0",
        ])
        #expect(run.status == 1, "\(run.errorText)")
        #expect(run.errorText.hasPrefix("themet: Could not reach the Met"))
        #expect(run.errorText.filter { $0 == "\n" }.count == 1)
    }

    @Test func standaloneFlagsAndDoubleDash() async throws {
        let fake = try await Self.fake()
        let directory = Self.dataDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let server = ["--upstream", fake.baseURL, "--data-dir", directory]
        let flags = try await ThemetCommand.run(["search", "cypress", "--isHighlight", "--limit", "1"] + server)
        #expect(flags.status == 0, "\(flags.errorText)")
        let page = try #require(try JSONSerialization.jsonObject(with: flags.output) as? [String: Any])
        #expect((page["query"] as? [String: Any])?["isHighlight"] as? Bool == true)
        #expect(page["limit"] as? Int == 1)
        let dashed = try await ThemetCommand.run(["search"] + server + ["--", "--help"])
        #expect(dashed.status == 0, "\(dashed.errorText)")
        let query = try #require(try JSONSerialization.jsonObject(with: dashed.output) as? [String: Any])
        #expect((query["query"] as? [String: Any])?["q"] as? String == "--help")
    }

    /// A reader that has gone (`| true` here, `| head` once it has read enough) ends the command
    /// quietly, with the status a SIGPIPE would have given (141), never a crash.
    @Test func aReaderThatHasGoneEndsTheCommandQuietly() async throws {
        let fake = try await Self.fake()
        let directory = Self.dataDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let command = Self.shellCommand([
            BuiltProducts.themet.path, "search", "cypress", "--upstream", fake.baseURL, "--data-dir", directory,
        ])
        // `true` exits at once, long before the search is answered: the write finds no reader.
        let run = try await ThemetCommand.run(
            ["-c", command + " | true; echo \"status ${PIPESTATUS[0]}\" >&2"],
            executable: URL(fileURLWithPath: "/bin/bash"))
        #expect(run.errorText == "status 141\n")
    }

    @Test func onATerminalTheJSONIsIndentedInTheDocumentedOrderWithPlainSlashes() async throws {
        let fake = try await Self.fake()
        let directory = Self.dataDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let (status, screen) = try await Self.onTerminal([
            "search", "cypress", "--limit", "1", "--upstream", fake.baseURL, "--data-dir", directory,
        ])
        #expect(status == 0, "\(screen)")
        let topLevel = screen.split(separator: "\n").filter { $0.hasPrefix("  \"") }.map {
            String($0.dropFirst(3).prefix { $0 != "\"" })
        }
        #expect(
            topLevel == [
                "query", "source", "total", "offset", "limit", "sort", "objects", "missing", "withoutImage", "pending",
                "next",
            ])
        #expect(screen.contains(#""primaryImage": "https://images.metmuseum.org/"#))
        #expect(!screen.contains(#"\/"#))
        #expect(screen.contains(#"  "missing": [],"#))
        // A wait the route refuses is refused on a terminal too, at once, as piped.
        let refused = try await Self.onTerminal([
            "search", "cypress", "--wait", "50000", "--upstream", fake.baseURL, "--data-dir", directory,
        ])
        #expect(refused.status == 64, "\(refused.screen)")
        #expect(refused.screen.hasPrefix("themet: --wait: "))
        // Piped, the bytes are the server's, one line.
        let piped = try await ThemetCommand.run([
            "search", "cypress", "--limit", "1", "--fields", "title", "--upstream", fake.baseURL, "--data-dir",
            directory,
        ])
        #expect(piped.output.filter { $0 == 0x0A }.count == 1)
    }

    @Test func aSlowMetShowsProgressOnATerminalAndWhatStayedPendingIsSaid() async throws {
        let fake = try await Self.fake(["--latency", "700", "--synthetic", "100"])
        let directory = Self.dataDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let server = ["--upstream", fake.baseURL, "--data-dir", directory]
        let (status, screen) = try await Self.onTerminal(
            ["search", "painting", "--limit", "8", "--fields", "objectID"] + server)
        #expect(status == 0, "\(screen)")
        #expect(screen.contains(" of 8 objects, "), "\(screen)")
        #expect(screen.contains("\"pending\": []"))
        // A wait too short for everything: what stayed pending is said, on a terminal or not.
        let short = try await ThemetCommand.run(["search", "vase", "--limit", "8", "--wait", "1200"] + server)
        #expect(short.status == 0)
        #expect(short.errorText.contains("still pending"), "\(short.errorText)")
        #expect(!short.errorText.contains(" of 8 objects"))
    }

    @Test func aFlagOverridesABadEnvironmentVariable() async throws {
        let directory = Self.dataDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let themet = try await RunningProcess(
            BuiltProducts.themet,
            ["serve", "--port", "0", "--upstream", BuiltProducts.fixtures.path, "--data-dir", directory],
            environment: ["THEMET_PORT": "abc"])
        #expect(themet.port > 0)
        let bad = try await ThemetCommand.run(["search", "cypress", "--upstream", "/nonexistent-themet-dir"])
        #expect(bad.status == 64)
    }
}
