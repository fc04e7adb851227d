import Foundation
import TestKit
import Testing

/// The persistent tier through the real binaries: what one themet fetched, the next themet on the
/// same data directory answers without the Met, after SIGTERM or `kill -9`, and never with bytes
/// the Met did not send.
@Suite("The cache survives restarts")
struct PersistenceTests {
    /// The pace out of the way: these tests are about storage, not politeness.
    static let unpaced = ["--upstream-rate", "10000", "--upstream-burst", "1000", "--upstream-concurrency", "64"]

    /// GETs `paths` against `servers`, at most `width` at a time, and returns every result by path.
    static func fetch(_ paths: [String], from servers: Servers, width: Int = 32) async throws -> [String: HTTPResult] {
        var results: [String: HTTPResult] = [:]
        for start in stride(from: 0, to: paths.count, by: width) {
            try await withThrowingTaskGroup(of: (String, HTTPResult).self) { group in
                for path in paths[start..<min(start + width, paths.count)] {
                    group.addTask { (path, try await servers.get(path)) }
                }
                for try await (path, result) in group { results[path] = result }
            }
        }
        return results
    }

    /// The `disk` member of `/health`, or nil when the tier is off.
    static func disk(_ servers: Servers) async throws -> [String: Any]? {
        try await servers.get("/health").json()["disk"] as? [String: Any]
    }

    /// Waits (at most 10 s) until the writer has committed everything it was given.
    static func waitUntilCommitted(_ servers: Servers) async throws {
        for _ in 0..<1_000 {
            if try await disk(servers)?["queued"] as? Int == 0 { return }
            try await Task.sleep(for: .milliseconds(10))
        }
        Issue.record("the persistent tier never caught up")
    }

    @Test(arguments: [SIGTERM, SIGKILL])
    func aRestartAnswersEveryObjectAndTheSearchFromTheDiskWithoutTheMet(signal: Int32) async throws {
        let servers = try await Servers.start(fake: ["--synthetic", "2000"], themet: Self.unpaced)
        let paths = (1...1_000).map { "/objects/\($0)" } + ["/search?q=Synthetic%20Study%20No.%201&limit=20"]
        let before = try await Self.fetch(paths, from: servers)
        #expect(before.values.allSatisfy { $0.status == 200 })
        let calls = try await servers.upstreamStats().total
        // A kill -9 loses what is not yet committed: wait for the writer, as an operator would not.
        if signal == SIGKILL { try await Self.waitUntilCommitted(servers) }

        servers.themet.signal(signal)
        #expect(await servers.themet.waitForExit() == (signal == SIGTERM ? 0 : SIGKILL))
        let restarted = try await servers.restartingThemet(Self.unpaced)
        let after = try await Self.fetch(paths, from: restarted)
        #expect(try await restarted.upstreamStats().total == calls)
        for path in paths {
            let (first, second) = (try #require(before[path]), try #require(after[path]))
            #expect(second.status == 200, "\(path)")
            #expect(second.body == first.body, "\(path)")
            #expect(second.header("ETag") == first.header("ETag"), "\(path)")
        }
        #expect(after["/objects/1"]?.header("Cache-Status")?.hasSuffix("detail=disk") == true)
        let disk = try #require(try await Self.disk(restarted))
        #expect(disk["corrupt"] as? Int == 0)
        #expect((disk["hits"] as? Int ?? 0) >= 1_000)
        restarted.themet.signal(SIGTERM)
        #expect(await restarted.themet.waitForExit() == 0)
    }

    @Test func killedAtAnyMomentDuringAStormOfMissesItReopensAndNeverServesOtherBytes() async throws {
        let servers = try await Servers.start(fake: ["--synthetic", "3000"], themet: Self.unpaced)
        servers.themet.signal(SIGTERM)
        #expect(await servers.themet.waitForExit() == 0)
        // What the Met sends for each object, asked of the fake directly.
        let ids = Array(1...400)
        var truth: [Int: Data] = [:]
        for id in ids {
            truth[id] = try await HTTPClient.request(servers.fake.baseURL + "/public/collection/v1/objects/\(id)").body
        }
        var answered = 0
        for round in 0..<20 {
            let themet = try await servers.restartingThemet(Self.unpaced)
            #expect(try await Self.disk(themet) != nil, "round \(round): the database did not open")
            #expect(!themet.themet.standardError.contains("moved it to"), "round \(round)")
            // Misses and disk hits mixed: each round asks 60 objects, half of them asked before.
            let wanted = (0..<60).map { ids[(round * 31 + $0 * 7) % ids.count] }
            let storm = Task {
                await withTaskGroup(of: (Int, HTTPResult?).self) { group -> [(Int, HTTPResult?)] in
                    for id in wanted { group.addTask { (id, try? await themet.get("/objects/\(id)")) } }
                    var results: [(Int, HTTPResult?)] = []
                    for await result in group { results.append(result) }
                    return results
                }
            }
            // Killed after 0 to 95 ms: before, during and after the writer's commits.
            try await Task.sleep(for: .milliseconds(round * 5))
            themet.themet.signal(SIGKILL)
            _ = await themet.themet.waitForExit()
            for (id, result) in await storm.value {
                guard let result, result.status == 200 else { continue }
                answered += 1
                #expect(result.body == truth[id], "round \(round): object \(id) differs from the Met's")
            }
        }
        // The last restart, after twenty kills: every object the Met has is answered as it sent it.
        let last = try await servers.restartingThemet(Self.unpaced)
        let results = try await Self.fetch(ids.map { "/objects/\($0)" }, from: last)
        for id in ids { #expect(results["/objects/\(id)"]?.body == truth[id], "object \(id)") }
        #expect(try await Self.disk(last)?["corrupt"] as? Int == 0)
        #expect(answered > 0)
        last.themet.signal(SIGTERM)
        #expect(await last.themet.waitForExit() == 0)
    }

    @Test func aByteFlippedInTheFileIsAMissAndTheMetIsAskedAgain() async throws {
        let servers = try await Servers.start(fake: ["--synthetic", "100"], themet: Self.unpaced)
        let paths = (1...20).map { "/objects/\($0)" }
        let before = try await Self.fetch(paths, from: servers)
        servers.themet.signal(SIGTERM)
        #expect(await servers.themet.waitForExit() == 0)

        // SIGTERM moved every page into cache.sqlite; flip one byte of object 17's stored body.
        let file = servers.dataDirectory + "/cache.sqlite"
        var bytes = [UInt8](try #require(FileManager.default.contents(atPath: file)))
        let body = [UInt8](try #require(before["/objects/17"]).body)
        let needle = Array(body.prefix(48))
        let at = try #require(bytes.firstRange(of: needle), "object 17's body is not in the file")
        bytes[at.lowerBound + 40] ^= 0x01
        try Data(bytes).write(to: URL(fileURLWithPath: file))

        let calls = try await servers.upstreamStats().paths["/public/collection/v1/objects/17"] ?? 0
        let restarted = try await servers.restartingThemet(Self.unpaced)
        let after = try await Self.fetch(paths, from: restarted)
        for path in paths { #expect(after[path]?.body == before[path]?.body, "\(path)") }
        #expect(after["/objects/17"]?.header("Cache-Status") == "TheMet; fwd=uri-miss; stored")
        #expect(after["/objects/16"]?.header("Cache-Status")?.hasSuffix("detail=disk") == true)
        #expect(try await restarted.upstreamStats().paths["/public/collection/v1/objects/17"] == calls + 1)
        let disk = try #require(try await Self.disk(restarted))
        #expect(disk["corrupt"] as? Int == 1)
        #expect(restarted.themet.standardError.contains("damaged"))
        restarted.themet.signal(SIGTERM)
        #expect(await restarted.themet.waitForExit() == 0)
    }

    @Test func aCacheFileThatIsNotADatabaseIsSetAsideAndTheServerServes() async throws {
        let servers = try await Servers.start(fake: ["--synthetic", "10"], themet: Self.unpaced)
        servers.themet.signal(SIGTERM)
        #expect(await servers.themet.waitForExit() == 0)
        let file = servers.dataDirectory + "/cache.sqlite"
        try? FileManager.default.removeItem(atPath: file + "-wal")
        try Data("not a database, but somebody's file".utf8).write(to: URL(fileURLWithPath: file))

        let restarted = try await servers.restartingThemet(Self.unpaced)
        #expect(try await restarted.get("/objects/3").status == 200)
        #expect(try await Self.disk(restarted) != nil)
        let names = try FileManager.default.contentsOfDirectory(atPath: servers.dataDirectory)
        let aside = try #require(
            names.first { $0.hasPrefix("cache.sqlite.corrupt-") && !$0.hasSuffix("-shm") && !$0.hasSuffix("-wal") })
        #expect(
            FileManager.default.contents(atPath: servers.dataDirectory + "/" + aside)
                == Data("not a database, but somebody's file".utf8))
        #expect(restarted.themet.standardError.contains("moved it to"))
        restarted.themet.signal(SIGTERM)
        #expect(await restarted.themet.waitForExit() == 0)
    }

    @Test func aPurgeFromThisMachineRemovesTheEntryFromMemoryAndTheDisk() async throws {
        let servers = try await Servers.start(fake: ["--synthetic", "10"], themet: Self.unpaced)
        #expect(try await servers.get("/objects/5").status == 200)
        #expect(try await servers.get("/objects/6").status == 200)
        try await Self.waitUntilCommitted(servers)
        let purged = try await servers.get("/cache/objects/5", method: "DELETE")
        #expect(purged.status == 200)
        let json = try purged.json()
        #expect(json["removedFromMemory"] as? Int == 1)
        #expect(json["removedFromDisk"] as? Int == 1)
        #expect(try await servers.get("/cache/objects/5").status == 405)
        servers.themet.signal(SIGTERM)
        #expect(await servers.themet.waitForExit() == 0)

        let restarted = try await servers.restartingThemet(Self.unpaced)
        #expect(try await restarted.get("/objects/5").header("Cache-Status") == "TheMet; fwd=uri-miss; stored")
        #expect(try await restarted.get("/objects/6").header("Cache-Status")?.hasSuffix("detail=disk") == true)
        #expect(try await restarted.upstreamStats().paths["/public/collection/v1/objects/5"] == 2)
        restarted.themet.signal(SIGTERM)
        #expect(await restarted.themet.waitForExit() == 0)
    }

    @Test func aSoftPurgeDuringABlockLeavesTheRecordAnsweringFromMemoryAndAfterARestartFromTheDisk() async throws {
        // The fake answers two requests, then blocks every other for ten minutes.
        let servers = try await Servers.start(
            fake: ["--synthetic", "10", "--block-after", "2", "--block-seconds", "600"], themet: Self.unpaced)
        let five = try await servers.get("/objects/5")
        #expect(five.status == 200)
        #expect(try await servers.get("/objects/6").status == 200)
        try await Self.waitUntilCommitted(servers)
        // Hostile values are refused before anything is touched.
        for target in [
            "/cache/objects/5?soft=maybe", "/cache/objects/5?soft=true&soft=false", "/cache/objects/5?soft=",
        ] {
            let refused = try await servers.get(target, method: "DELETE")
            #expect(refused.status == 400, "\(target)")
            #expect(try refused.json()["code"] as? String == "invalid_parameter", "\(target)")
        }
        let purged = try await servers.get("/cache/objects/5?soft=true", method: "DELETE")
        #expect(purged.status == 200)
        let json = try purged.json()
        #expect(json["soft"] as? Bool == true)
        #expect(json["expiredInMemory"] as? Int == 1)
        #expect(json["expiredOnDisk"] as? Int == 1)
        #expect(json["expiredInRedis"] is NSNull)

        let stale = try await servers.get("/objects/5")
        #expect(stale.status == 200)
        #expect(stale.body == five.body)
        #expect(stale.header("Cache-Status")?.contains("fwd=stale") == true)
        try await Self.waitUntilCommitted(servers)
        servers.themet.signal(SIGTERM)
        #expect(await servers.themet.waitForExit() == 0)

        // The row on disk is the expired copy: asked for, the Met is tried, blocks, and it stands in.
        let restarted = try await servers.restartingThemet(Self.unpaced)
        let fromDisk = try await restarted.get("/objects/5")
        #expect(fromDisk.status == 200)
        #expect(fromDisk.body == five.body)
        #expect(fromDisk.header("Cache-Status")?.contains("fwd=stale") == true)
        #expect(try await restarted.get("/objects/6").header("Cache-Status")?.hasSuffix("detail=disk") == true)
        #expect(try await restarted.upstreamStats().paths["/public/collection/v1/objects/5"] ?? 0 >= 2)
        restarted.themet.signal(SIGTERM)
        #expect(await restarted.themet.waitForExit() == 0)
    }

    @Test func aSnapshotTakenDuringAFillStartsAnotherInstanceWithoutTheMet() async throws {
        let servers = try await Servers.start(fake: ["--synthetic", "1000"], themet: Self.unpaced)
        let paths = (1...300).map { "/objects/\($0)" }
        let before = try await Self.fetch(paths, from: servers)
        try await Self.waitUntilCommitted(servers)
        let scratch = TemporaryDirectory()
        let files = scratch.path
        let file = files + "/cache.snapshot"
        // The directory's last sync travels with the snapshot to a directory that had none.
        let synced = (Date().timeIntervalSince1970 - 3_600).rounded()
        try Data(#"{"startedAt":\#(synced)}"#.utf8).write(
            to: URL(fileURLWithPath: servers.dataDirectory + "/sync.json"))
        // More records are fetched and stored while the snapshot is taken.
        async let filling = Self.fetch((301...700).map { "/objects/\($0)" }, from: servers)
        let export = try await ThemetCommand.run(["export", file, "--data-dir", servers.dataDirectory])
        _ = try await filling
        #expect(export.status == 0, "\(export.errorText)")
        let summary = String(decoding: export.output, as: UTF8.self)
        let exported = try #require(Int(summary.split(separator: " ").dropFirst().first ?? ""), "\(summary)")
        #expect(exported >= 300)

        // A copy with one byte of a record flipped is refused whole, and the directory stays empty.
        var spoiled = try #require(FileManager.default.contents(atPath: file))
        let title = try #require(spoiled.firstRange(of: Data("Synthetic Study No. 150\"".utf8)))
        spoiled[title.lowerBound + 3] ^= 0x01
        try spoiled.write(to: URL(fileURLWithPath: files + "/spoiled.snapshot"))
        let target = files + "/target"
        let refused = try await ThemetCommand.run(["import", files + "/spoiled.snapshot", "--data-dir", target])
        #expect(refused.status == 1)
        #expect(refused.errorText.contains("import refused"), "\(refused.errorText)")
        #expect(!FileManager.default.fileExists(atPath: target + "/cache.sqlite"))

        let imported = try await ThemetCommand.run(["import", file, "--data-dir", target])
        #expect(imported.status == 0, "\(imported.errorText)")
        #expect(
            String(decoding: imported.output, as: UTF8.self).contains("\(exported) records, \(exported) stored, 0 kept")
        )
        let sync = try JSONSerialization.jsonObject(
            with: try #require(FileManager.default.contents(atPath: target + "/sync.json")))
        #expect((sync as? [String: Any])?["startedAt"] as? Double == synced)
        servers.themet.signal(SIGTERM)
        #expect(await servers.themet.waitForExit() == 0)

        let calls = try await servers.upstreamStats().total
        let started = try await servers.restartingThemet(Self.unpaced, dataDirectory: target)
        let after = try await Self.fetch(paths, from: started)
        #expect(try await started.upstreamStats().total == calls)
        for path in paths {
            #expect(after[path]?.body == before[path]?.body, "\(path)")
            #expect(after[path]?.header("ETag") == before[path]?.header("ETag"), "\(path)")
            #expect(after[path]?.header("Cache-Status")?.hasSuffix("detail=disk") == true, "\(path)")
        }
        started.themet.signal(SIGTERM)
        #expect(await started.themet.waitForExit() == 0)
    }

    @Test func killedAtAnyMomentDuringAnImportTheDirectoryStaysUsableAndTheNextImportCompletesIt() async throws {
        let servers = try await Servers.start(fake: ["--synthetic", "2000"], themet: Self.unpaced)
        let paths = (1...2000).map { "/objects/\($0)" }
        let before = try await Self.fetch(paths, from: servers)
        try await Self.waitUntilCommitted(servers)
        let scratch = TemporaryDirectory()
        let file = scratch.path + "/cache.snapshot"
        let export = try await ThemetCommand.run(["export", file, "--data-dir", servers.dataDirectory])
        #expect(export.status == 0, "\(export.errorText)")
        servers.themet.signal(SIGTERM)
        #expect(await servers.themet.waitForExit() == 0)

        // kill -9 from the start of the check to the middle and the end of the stores.
        let target = scratch.path + "/target"
        var killed = 0
        for milliseconds in [10, 40, 80, 120, 160, 220, 300] {
            let run = try await ThemetCommand.run(
                ["import", file, "--data-dir", target], interruptAfter: .milliseconds(milliseconds), signal: SIGKILL)
            if run.status != 0 { killed += 1 }
        }
        #expect(killed > 0)
        let imported = try await ThemetCommand.run(["import", file, "--data-dir", target])
        #expect(imported.status == 0, "\(imported.errorText)")
        let summary = String(decoding: imported.output, as: UTF8.self)
        #expect(summary.contains("2000 records, "), "\(summary)")

        let calls = try await servers.upstreamStats().total
        let started = try await servers.restartingThemet(Self.unpaced, dataDirectory: target)
        let after = try await Self.fetch(paths, from: started)
        #expect(try await started.upstreamStats().total == calls)
        for path in paths { #expect(after[path]?.body == before[path]?.body, "\(path)") }
        #expect(try await Self.disk(started)?["corrupt"] as? Int == 0)
        started.themet.signal(SIGTERM)
        #expect(await started.themet.waitForExit() == 0)
    }

    @Test func aRunningServerHandsOutASnapshotThatStartsAnotherInstance() async throws {
        let servers = try await Servers.start(fake: ["--synthetic", "100"], themet: Self.unpaced)
        let paths = (1...50).map { "/objects/\($0)" }
        let before = try await Self.fetch(paths, from: servers)
        try await Self.waitUntilCommitted(servers)
        let answer = try await servers.get("/cache/snapshot")
        #expect(answer.status == 200)
        #expect(answer.header("Content-Type") == "application/vnd.sqlite3")
        #expect(answer.header("Content-Disposition")?.hasPrefix("attachment; filename=\"themet-") == true)
        #expect(answer.header("Cache-Control") == "no-store")
        #expect(try await servers.get("/cache/snapshot?fresh=1").status == 400)
        #expect(try await servers.get("/cache/snapshot", method: "DELETE").status == 405)
        // Made for the request and gone from the directory once sent.
        let names = try FileManager.default.contentsOfDirectory(atPath: servers.dataDirectory)
        #expect(!names.contains { $0.hasPrefix("snapshot-") }, "\(names)")

        // `themet import URL` takes it from the running server, through a file beside the cache
        // that is gone afterwards.
        let scratch = TemporaryDirectory()
        let target = scratch.path + "/target"
        let url = servers.themet.baseURL + "/cache/snapshot"
        let imported = try await ThemetCommand.run(["import", url, "--data-dir", target])
        #expect(imported.status == 0, "\(imported.errorText)")
        #expect(String(decoding: imported.output, as: UTF8.self).contains("imported \(url): 50 records, 50 stored"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: target).allSatisfy { $0.hasPrefix("cache.sqlite") })
        let calls = try await servers.upstreamStats().total
        let second = try await servers.restartingThemet(Self.unpaced, dataDirectory: target)
        let after = try await Self.fetch(paths, from: second)
        #expect(try await second.upstreamStats().total == calls)
        for path in paths { #expect(after[path]?.body == before[path]?.body, "\(path)") }
        for running in [servers.themet, second.themet] {
            running.signal(SIGTERM)
            #expect(await running.waitForExit() == 0)
        }
    }

    /// `--images` and `?images=true`: the pictures the curl client fetched travel with the records
    /// and are served by the importing instance from its files, without the image host; an
    /// import keeps only what its own bounds admit.
    @Test func aSnapshotWithImagesCarriesThePicturesToAnotherInstance() async throws {
        let arguments = Self.unpaced + ImageTierTests.patient
        let servers = try await Servers.start(themet: arguments)
        let paths =
            ["/objects/436535"] + [ImageTierTests.large, "/CRDImages/ep/web-large/DT1947.jpg"].map { "/images" + $0 }
        let before = try await Self.fetch(paths, from: servers)
        #expect(before.values.allSatisfy { $0.status == 200 })
        try await Self.waitUntilCommitted(servers)
        for _ in 0..<1_000 {
            let files = try await servers.get("/health").json()["images"] as? [String: Any]
            if (files?["files"] as? [String: Any])?["queued"] as? Int == 0 { break }
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(try await servers.get("/cache/snapshot?images=maybe").status == 400)

        let scratch = TemporaryDirectory()
        let file = scratch.path + "/with-pictures.snapshot"
        let export = try await ThemetCommand.run(["export", file, "--images", "--data-dir", servers.dataDirectory])
        #expect(export.status == 0, "\(export.errorText)")
        #expect(String(decoding: export.output, as: UTF8.self).contains(" and 2 pictures ("), "\(export.output)")
        for (flags, expected) in [
            (["--image-cache-size", "0"], "; 2 pictures left out (no picture files"),
            (["--image-max-pixels", "1000"], "; 2 pictures, 0 stored, 0 kept, 2 refused"),
        ] {
            let bounded = try await ThemetCommand.run(
                ["import", file, "--data-dir", scratch.path + "/bounded-\(flags[0])"] + flags)
            #expect(bounded.status == 0, "\(bounded.errorText)")
            #expect(String(decoding: bounded.output, as: UTF8.self).contains(expected), "\(bounded.output)")
        }

        let target = scratch.path + "/target"
        let url = servers.themet.baseURL + "/cache/snapshot?images=true"
        let imported = try await ThemetCommand.run(["import", url, "--data-dir", target])
        #expect(imported.status == 0, "\(imported.errorText)")
        let summary = String(decoding: imported.output, as: UTF8.self)
        #expect(summary.contains("; 2 pictures, 2 stored, 0 kept, 0 refused"), "\(summary)")
        servers.themet.signal(SIGTERM)
        #expect(await servers.themet.waitForExit() == 0)

        let calls = try await servers.upstreamStats().total
        let second = try await servers.restartingThemet(arguments, dataDirectory: target)
        let after = try await Self.fetch(paths, from: second)
        #expect(try await second.upstreamStats().total == calls)
        for path in paths {
            #expect(after[path]?.body == before[path]?.body, "\(path)")
            #expect(after[path]?.header("ETag") == before[path]?.header("ETag"), "\(path)")
        }
        second.themet.signal(SIGTERM)
        #expect(await second.themet.waitForExit() == 0)
    }

    @Test func anImportFromAURLIsRefusedWithTheServersReasonAndLeavesNothingBehind() async throws {
        let token = "a-token-of-twenty-chars"
        let servers = try await Servers.start(
            fake: ["--synthetic", "20"], themet: Self.unpaced + ["--admin-token", token])
        _ = try await Self.fetch((1...10).map { "/objects/\($0)" }, from: servers)
        try await Self.waitUntilCommitted(servers)
        let scratch = TemporaryDirectory()
        let target = scratch.path + "/target"
        let base = servers.themet.baseURL
        // A download a killed import left behind (no process holds it) goes at the next import.
        try FileManager.default.createDirectory(atPath: target, withIntermediateDirectories: true)
        let leftover = target + "/snapshot-download-left-behind"
        #expect(FileManager.default.createFile(atPath: leftover, contents: Data(count: 4_096)))
        // A port bound but not listening: connecting to it is refused.
        let (socket, port) = try Loopback.bind(listening: false)
        defer { close(socket) }
        let refusedURL = "http://127.0.0.1:\(port)/cache/snapshot"
        let closed = try await ThemetCommand.run(["import", refusedURL, "--data-dir", target])
        for (arguments, reason) in [
            ([base + "/cache/snapshot"], "answered 403: Taking a snapshot needs Authorization: Bearer"),
            ([base + "/cache/snapshot", "--admin-token", "not-the-token-at-all"], "answered 403: "),
            ([base + "/health"], "not a TheMet snapshot"),
            ([base + "/nowhere"], "answered 404: "),
        ] {
            let refused = try await ThemetCommand.run(["import"] + arguments + ["--data-dir", target])
            #expect(refused.status == 1, "\(arguments)")
            #expect(refused.errorText.contains("themet: import refused: "), "\(refused.errorText)")
            #expect(refused.errorText.contains(reason), "\(arguments): \(refused.errorText)")
            #expect(!FileManager.default.fileExists(atPath: target + "/cache.sqlite"), "\(arguments)")
            let left = (try? FileManager.default.contentsOfDirectory(atPath: target)) ?? []
            #expect(!left.contains { $0.hasPrefix("snapshot-") }, "\(left)")
        }
        #expect(!FileManager.default.fileExists(atPath: leftover))
        #expect(closed.status == 1)
        #expect(closed.errorText.contains("cannot download \(refusedURL): unreachable"), "\(closed.errorText)")
        let imported = try await ThemetCommand.run(
            ["import", base + "/cache/snapshot", "--admin-token", token, "--data-dir", target])
        #expect(imported.status == 0, "\(imported.errorText)")
        #expect(String(decoding: imported.output, as: UTF8.self).contains("10 records, 10 stored"))
        servers.themet.signal(SIGTERM)
        #expect(await servers.themet.waitForExit() == 0)
    }

    @Test func withTheTierOffHealthSaysSoAndNothingIsWritten() async throws {
        let servers = try await Servers.start(themet: Self.unpaced + ["--disk-cache-size", "0"])
        #expect(try await servers.get("/objects/436535").status == 200)
        #expect(try await servers.get("/health").json()["disk"] is NSNull)
        let changes = try await servers.get("/changes")
        #expect(changes.status == 404)
        #expect(try changes.json()["code"] as? String == "no_persistent_cache")
        #expect(!FileManager.default.fileExists(atPath: servers.dataDirectory + "/cache.sqlite"))
        servers.themet.signal(SIGTERM)
        #expect(await servers.themet.waitForExit() == 0)
    }
}

/// `themet sync` through the real binaries: the fake Met reports records changed through its
/// control path, and exactly those among the cached ones are fetched again.
@Suite("metadataDate sync")
struct SyncCommandTests {
    @Test func syncRefetchesExactlyTheThreeChangedOfAHundredCachedObjects() async throws {
        let servers = try await Servers.start(fake: ["--synthetic", "300"], themet: PersistenceTests.unpaced)
        // Cache 100 that the first sync does not list anyway, so that only the marked ones change.
        let recent = try await Self.recentlyChanged(servers)
        let cached = Array((1...300).filter { !recent.contains($0) }.prefix(100))
        #expect(cached.count == 100)
        let paths = cached.map { "/objects/\($0)" }
        let before = try await PersistenceTests.fetch(paths, from: servers)
        servers.themet.signal(SIGTERM)
        #expect(await servers.themet.waitForExit() == 0)

        let marked = [cached[2], cached[29], cached[59]]
        let uncached = try #require((1...300).first { !cached.contains($0) && !recent.contains($0) })
        let ids = (marked + [uncached]).map(String.init).joined(separator: ",")
        #expect(
            try await HTTPClient.request(servers.fake.baseURL + "/__change?ids=\(ids)", method: "POST").status == 200)
        let sync = try await ThemetCommand.run(
            ["sync", "--upstream", servers.fake.baseURL, "--data-dir", servers.dataDirectory]
                + PersistenceTests.unpaced)
        #expect(sync.status == 0, "\(sync.errorText)")
        let summary = String(decoding: sync.output, as: UTF8.self)
        #expect(
            summary.contains("\(recent.count + 4) changed at the Met, 3 cached, 3 refreshed, 0 failed"), "\(summary)")
        let counts = try await servers.upstreamStats().paths
        for id in cached {
            #expect(counts["/public/collection/v1/objects/\(id)"] == (marked.contains(id) ? 2 : 1), "object \(id)")
        }
        #expect(counts["/public/collection/v1/objects/\(uncached)"] == nil)  // changed, but never cached
        #expect(counts["/public/collection/v1/objects"] == 2)  // the test's list, and the sync's

        // The restarted server answers everything from the disk: the changed three anew.
        let calls = try await servers.upstreamStats().total
        let restarted = try await servers.restartingThemet(PersistenceTests.unpaced)
        let after = try await PersistenceTests.fetch(paths, from: restarted)
        #expect(try await restarted.upstreamStats().total == calls)
        for path in paths {
            let isChanged = marked.contains { path == "/objects/\($0)" }
            #expect((after[path]?.body == before[path]?.body) == !isChanged, "\(path)")
            #expect(after[path]?.header("Cache-Status")?.hasSuffix("detail=disk") == true, "\(path)")
        }
        let revised = try #require(after["/objects/\(marked[0])"]).body
        #expect(String(decoding: revised, as: UTF8.self).contains("(revision 1)"))
        restarted.themet.signal(SIGTERM)
        #expect(await restarted.themet.waitForExit() == 0)
    }

    /// The fake's records whose own metadataDate falls within the month a first sync looks back
    /// over: listed as changed by any sync, whatever a test marks.
    static func recentlyChanged(_ servers: Servers) async throws -> [Int] {
        let day = Self.day(of: Date().timeIntervalSince1970 - 30 * 86_400)
        return try await HTTPClient.request(
            servers.fake.baseURL + "/public/collection/v1/objects?metadataDate=\(day)"
        ).json()["objectIDs"] as? [Int] ?? []
    }

    /// `YYYY-MM-DD` of `seconds` since 1970, in UTC.
    static func day(of seconds: Double) -> String {
        let formatter = DateFormatter()
        formatter.dateFormat = "yyyy-MM-dd"
        formatter.timeZone = TimeZone(secondsFromGMT: 0)
        formatter.locale = Locale(identifier: "en_US_POSIX")
        return formatter.string(from: Date(timeIntervalSince1970: seconds))
    }
}
