import Foundation
import Testing

/// `themet warm` through the real binaries: plain lines without a terminal, a bar on one, and a
/// Ctrl-C that keeps what was fetched.
@Suite("themet warm")
struct WarmCommandTests {
    /// A file of the IDs `ids`, with a comment and mixed separators, in `directory`.
    static func idFile(_ ids: [Int], in directory: String) throws -> String {
        let path = directory + "/ids.txt"
        var lines = ["# objects to warm"]
        for start in stride(from: 0, to: ids.count, by: 5) {
            let group: [String] = ids[start..<min(start + 5, ids.count)].map { String($0) }
            lines.append(group.joined(separator: start % 10 == 0 ? ", " : " "))
        }
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try Data(lines.joined(separator: "\n").utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    static func warm(_ servers: Servers, _ extra: [String], interruptOnceErrorsShow marker: String? = nil)
        async throws -> ThemetCommand.Outcome
    {
        try await ThemetCommand.run(
            ["warm", "--upstream", servers.fake.baseURL, "--data-dir", servers.dataDirectory] + extra,
            interruptOnceErrorsShow: marker)
    }

    @Test func withoutATerminalItPrintsLinesAndASummaryAndTheServerFindsEverythingOnDisk() async throws {
        let servers = try await Servers.start(fake: ["--synthetic", "100"], themet: PersistenceTests.unpaced)
        servers.themet.signal(SIGTERM)
        #expect(await servers.themet.waitForExit() == 0)
        let file = try Self.idFile(Array(1...40), in: servers.dataDirectory)

        let first = try await Self.warm(servers, ["--ids", file] + PersistenceTests.unpaced)
        #expect(first.status == 0, "\(first.errorText)")
        #expect(first.errorText.contains("warm: 40/40"), "\(first.errorText)")
        let summary = String(decoding: first.output, as: UTF8.self)
        #expect(summary.contains("warmed 40 of 40 object(s)"), "\(summary)")
        #expect(summary.contains("40 fetched, 0 already fresh, 0 failed"), "\(summary)")
        let again = try await Self.warm(servers, ["--ids", file] + PersistenceTests.unpaced)
        #expect(String(decoding: again.output, as: UTF8.self).contains("0 fetched, 40 already fresh, 0 failed"))

        let calls = try await servers.upstreamStats().total
        let restarted = try await servers.restartingThemet(PersistenceTests.unpaced)
        let answers = try await PersistenceTests.fetch((1...40).map { "/objects/\($0)" }, from: restarted)
        #expect(answers.values.allSatisfy { $0.header("Cache-Status")?.hasSuffix("detail=disk") == true })
        #expect(try await restarted.upstreamStats().total == calls)
        restarted.themet.signal(SIGTERM)
        #expect(await restarted.themet.waitForExit() == 0)
    }

    /// The Met's firewall blocks after three requests, for two seconds: the warm-up waits the
    /// block out (saying so), asks again for the object the block refused, and completes.
    @Test func aBlockIsWaitedOutAndTheWarmUpCompletes() async throws {
        let servers = try await Servers.start(
            fake: ["--synthetic", "100", "--block-after", "3", "--block-seconds", "2"],
            themet: PersistenceTests.unpaced)
        servers.themet.signal(SIGTERM)
        #expect(await servers.themet.waitForExit() == 0)
        let file = try Self.idFile(Array(1...8), in: servers.dataDirectory)
        let outcome = try await Self.warm(
            servers, ["--ids", file, "--block-cooldown", "1s", "--upstream-retries", "0"] + PersistenceTests.unpaced)
        #expect(outcome.status == 0, "\(outcome.errorText)")
        #expect(outcome.errorText.contains("waiting out a firewall block until"), "\(outcome.errorText)")
        let summary = String(decoding: outcome.output, as: UTF8.self)
        #expect(summary.contains("8 fetched, 0 already fresh, 0 failed"), "\(summary)")
    }

    /// `--images small` fetches each object's web-large picture from the fake's image host into
    /// the picture files: a server started afterwards serves them from disk, asking nothing.
    @Test func withImagesThePicturesReachThePictureFiles() async throws {
        let unpaced = PersistenceTests.unpaced + ["--image-rate", "1000", "--image-burst", "1000"]
        let servers = try await Servers.start(themet: unpaced)
        servers.themet.signal(SIGTERM)
        #expect(await servers.themet.waitForExit() == 0)
        // Two public-domain objects with pictures, and one (1) with none.
        let file = try Self.idFile([436_535, 437_980, 1], in: servers.dataDirectory)
        let first = try await Self.warm(servers, ["--ids", file, "--images", "small"] + unpaced)
        #expect(first.status == 0, "\(first.errorText)")
        let summary = String(decoding: first.output, as: UTF8.self)
        #expect(summary.contains("3 fetched, 0 already fresh, 0 failed"), "\(summary)")
        #expect(summary.contains("2 picture(s): 2 fetched, 0 already fresh, 0 failed"), "\(summary)")
        let again = try await Self.warm(servers, ["--ids", file, "--images", "small"] + unpaced)
        #expect(String(decoding: again.output, as: UTF8.self).contains("2 picture(s): 0 fetched, 2 already fresh"))

        let calls = try await servers.upstreamStats().total
        let restarted = try await servers.restartingThemet(unpaced)
        let pictures = ["DT1567", "DP130999"].map { "/images/CRDImages/ep/web-large/\($0).jpg" }
        let answers = try await PersistenceTests.fetch(pictures, from: restarted)
        for (path, answer) in answers {
            #expect(answer.status == 200, "\(path)")
            #expect(answer.header("Content-Type") == "image/jpeg", "\(path)")
        }
        #expect(try await restarted.upstreamStats().total == calls, "the pictures came from the files")
        restarted.themet.signal(SIGTERM)
        #expect(await restarted.themet.waitForExit() == 0)
    }

    @Test func aBadImagesValueIsAUsageError() async throws {
        let outcome = try await ThemetCommand.run(["warm", "--ids", "-", "--images", "huge"])
        #expect(outcome.status == 64)
        #expect(outcome.errorText.contains("--images: expected small or original, got 'huge'"), "\(outcome.errorText)")
    }

    @Test func onATerminalItDrawsABar() async throws {
        let servers = try await Servers.start(fake: ["--synthetic", "100"], themet: PersistenceTests.unpaced)
        servers.themet.signal(SIGTERM)
        #expect(await servers.themet.waitForExit() == 0)
        let file = try Self.idFile(Array(1...10), in: servers.dataDirectory)
        let words: [String] = [
            BuiltProducts.themet.path, "warm", "--ids", file, "--upstream", servers.fake.baseURL, "--data-dir",
            servers.dataDirectory,
        ]
        let command = (words + PersistenceTests.unpaced).joined(separator: " ")
        // script(1) gives the command a pseudo-terminal and copies what it writes.
        let run = try await ThemetCommand.run(
            ["-qec", command, "/dev/null"], executable: URL(fileURLWithPath: "/usr/bin/script"))
        #expect(run.status == 0, "\(run.errorText)")
        let screen = String(decoding: run.output, as: UTF8.self)
        #expect(screen.contains("\r"), "\(screen)")
        #expect(screen.contains("█"), "\(screen)")
        #expect(screen.contains("10/10"), "\(screen)")
        #expect(screen.contains("warmed 10 of 10 object(s)"), "\(screen)")
    }

    @Test func ctrlCStopsCleanlyAndKeepsWhatWasFetched() async throws {
        let servers = try await Servers.start(
            fake: ["--synthetic", "100", "--latency", "150"], themet: PersistenceTests.unpaced)
        servers.themet.signal(SIGTERM)
        #expect(await servers.themet.waitForExit() == 0)
        let file = try Self.idFile(Array(1...60), in: servers.dataDirectory)

        let stopped = try await Self.warm(
            servers, ["--ids", file] + PersistenceTests.unpaced, interruptOnceErrorsShow: "\nwarm: ")
        #expect(stopped.status == 130, "\(stopped.errorText)")
        let summary = String(decoding: stopped.output, as: UTF8.self)
        #expect(summary.contains("stopped by SIGINT"), "\(summary)")
        let fetched = try #require(
            summary.firstMatch(of: /: (\d+) fetched/).flatMap { Int($0.1) }, "no count in \(summary)")
        #expect((1..<60).contains(fetched), "\(summary)")

        // Exactly the objects fetched before the stop are on disk.
        let restarted = try await servers.restartingThemet(PersistenceTests.unpaced)
        let answers = try await PersistenceTests.fetch((1...60).map { "/objects/\($0)" }, from: restarted)
        let fromDisk = answers.values.filter { $0.header("Cache-Status")?.hasSuffix("detail=disk") == true }
        #expect(fromDisk.count == fetched)
        restarted.themet.signal(SIGTERM)
        #expect(await restarted.themet.waitForExit() == 0)
    }

    @Test(arguments: [
        ["--department", "x"], ["--q", "a", "--department", "3"], [], ["--hasImages", "true"], ["--q", "a", "stray"],
    ])
    func badArgumentsExit64WithOneLine(arguments: [String]) async throws {
        let run = try await ThemetCommand.run(["warm"] + arguments)
        #expect(run.status == 64)
        #expect(run.errorText.split(separator: "\n").count == 1, "\(run.errorText)")
    }
}
