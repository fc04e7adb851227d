import Foundation
import TestKit
import Testing

/// The access log of the built server: one line a request in either format, with the request ID
/// the response carried, written to a file or standard error, and none when turned off.
// Serialized, as CommandLineTests: each test starts and stops servers.
@Suite("Access logs end to end", .serialized)
struct AccessLogTests {
    /// A scripted session: a miss and a hit, a 400, a search, a HEAD, an unknown route, a client's
    /// own request ID, and bytes that are no request. Returns the request IDs the answers carried,
    /// in order (the unreadable request's last).
    private static func session(_ servers: Servers) async throws -> [String] {
        var ids: [String] = []
        for (method, target, headers) in [
            ("GET", "/objects/436535", ["User-Agent": "session \"one\""]), ("GET", "/objects/436535", [:]),
            ("GET", "/objects/abc", [:]), ("GET", "/search?q=cypress", [:]), ("HEAD", "/departments", [:]),
            ("GET", "/nope", ["X-Request-Id": "trace-42.a:b"]),
        ] as [(String, String, [String: String])] {
            let result = try await servers.get(target, method: method, headers: headers)
            ids.append(try #require(result.header("X-Request-Id"), "\(method) \(target)"))
            if result.status >= 400, method == "GET" {
                #expect(try result.json()["requestId"] as? String == ids.last)
            }
        }
        #expect(ids.last == "trace-42.a:b")
        let rejected = try await RawHTTP.exchange(port: servers.themet.port, request: Array("GARBAGE\r\n\r\n".utf8))
        let line = try #require(rejected.text.split(separator: "\r\n").first { $0.hasPrefix("X-Request-Id: ") })
        ids.append(String(line.dropFirst("X-Request-Id: ".count)))
        #expect(rejected.text.hasPrefix("HTTP/1.1 400 Bad Request\r\n"))
        #expect(rejected.text.contains("Access-Control-Allow-Origin: *\r\n"))
        #expect(rejected.text.contains("\"requestId\":\"\(ids.last!)\""))
        return ids
    }

    /// Stops themet (SIGTERM: its loops write what they hold) and waits for it.
    private static func stop(_ servers: Servers) async throws {
        servers.themet.signal()
        #expect(await servers.themet.waitForExit() == 0)
    }

    @Test func jsonLinesToAFileParseAndCarryTheResponsesRequestIDs() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("access-\(UUID().uuidString).log").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let servers = try await Servers.start(themet: ["--log-format", "json", "--access-log", path])
        let ids = try await Self.session(servers)
        try await Self.stop(servers)

        let text = try String(contentsOfFile: path, encoding: .utf8)
        let lines = text.split(separator: "\n")
        #expect(lines.count == ids.count)
        var records: [[String: Any]] = []
        for line in lines {
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            records.append(object)
        }
        // Each loop writes its own batches: the order across loops is not the order of the session.
        #expect(Set(records.compactMap { $0["requestId"] as? String }) == Set(ids))
        for record in records {
            #expect(record["type"] as? String == "access")
            #expect((record["time"] as? String)?.wholeMatch(of: #/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z/#) != nil)
            #expect(record["client"] as? String == "127.0.0.1")
            #expect(record["durationMs"] is Double || record["durationMs"] is Int)
        }
        let byID = Dictionary(uniqueKeysWithValues: records.map { ($0["requestId"] as! String, $0) })
        #expect(byID[ids[0]]?["cache"] as? String == "miss")
        #expect(byID[ids[0]]?["userAgent"] as? String == "session \"one\"")
        #expect(byID[ids[0]]?["upstreamMs"] is Double || byID[ids[0]]?["upstreamMs"] is Int)
        #expect(byID[ids[1]]?["cache"] as? String == "hit")
        #expect(byID[ids[1]]?["upstreamMs"] is NSNull)
        #expect(byID[ids[2]]?["status"] as? Int == 400)
        #expect(byID[ids[4]]?["method"] as? String == "HEAD")
        #expect(byID[ids[4]]?["bytes"] as? Int == 0)
        #expect(byID[ids[5]]?["target"] as? String == "/nope")
        #expect(byID[ids[6]]?["method"] as? String == "-")
        #expect(byID[ids[6]]?["status"] as? Int == 400)
        // The other log lines went to standard error, as JSON too.
        for line in servers.themet.standardError.split(separator: "\n") {
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            #expect(object["level"] is String && object["message"] is String)
        }
    }

    /// logrotate without `copytruncate`: the file is moved away and the server sent SIGHUP while
    /// requests go on; every request's line is whole in one file or the other, once, and the lines
    /// after the reopening are in the new file at the path.
    @Test func aHangUpAfterTheFileMovedWritesTheNextLinesToANewFileLosingNone() async throws {
        let directory = TemporaryDirectory()
        let path = directory.path + "/access.log"
        let servers = try await Servers.start(themet: ["--log-format", "json", "--access-log", path])
        func requests(_ count: Int) async throws -> [String] {
            try await withThrowingTaskGroup(of: String?.self) { group in
                for _ in 0..<count { group.addTask { try await servers.get("/health").header("X-Request-Id") } }
                return try await group.reduce(into: []) { if let id = $1 { $0.append(id) } }
            }
        }
        var ids = try await requests(20)
        try FileManager.default.moveItem(atPath: path, toPath: path + ".1")
        servers.themet.signal(SIGHUP)
        ids += try await requests(20)
        for _ in 0..<250 where !servers.themet.standardError.contains("received SIGHUP") {
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(servers.themet.standardError.contains("received SIGHUP: reopened the access log \(path)"))
        let after = try await requests(20)
        ids += after
        try await Self.stop(servers)

        func requestIDs(_ file: String) throws -> [String] {
            try String(contentsOfFile: file, encoding: .utf8).split(separator: "\n").map { line in
                let record = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
                return try #require(record?["requestId"] as? String, "\(line)")
            }
        }
        let (old, new) = (try requestIDs(path + ".1"), try requestIDs(path))
        #expect((old + new).sorted() == ids.sorted())
        #expect(Set(after).isSubset(of: Set(new)))
    }

    @Test func textLinesOnStandardErrorMatchTheirPattern() async throws {
        let servers = try await Servers.start()
        let ids = try await Self.session(servers)
        try await Self.stop(servers)

        let access =
            #/(?<time>\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z) (?<client>\S+) (?<id>\S+) "(?<method>\S+) (?<target>(?:[^"\\]|\\.)*)" (?<status>\d{3}) (?<bytes>\d+) (?<duration>\d+\.\d\d) (?<cache>\S+) (?<upstream>-|\d+\.\d\d) (?<agent>-|"(?:[^"\\]|\\.)*")/#
        let other = #/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z (debug|info|warning|error): .+/#
        var seen: [String] = []
        for line in servers.themet.standardError.split(separator: "\n") {
            if let match = line.wholeMatch(of: access) {
                seen.append(String(match.id))
                #expect(match.client == "127.0.0.1")
            } else {
                #expect(line.wholeMatch(of: other) != nil, "\(line)")
            }
        }
        #expect(seen.sorted() == ids.sorted())
    }

    @Test(arguments: [["--access-log", "off"], ["--log-level", "warning"]])
    func noAccessLinesWhenOffOrAboveInfo(arguments: [String]) async throws {
        let servers = try await Servers.start(themet: arguments)
        _ = try await Self.session(servers)
        try await Self.stop(servers)
        #expect(!servers.themet.standardError.contains("/objects/436535"))
    }

    @Test func anAccessLogThatCannotBeOpenedStopsStartUpWithAUsageError() async throws {
        let themet = Process()
        themet.executableURL = BuiltProducts.themet
        themet.environment = BuiltProducts.environment
        themet.arguments = [
            "serve", "--port", "0", "--upstream", BuiltProducts.fixtures.path, "--access-log",
            "/nonexistent-dir/access.log",
        ]
        let errors = Pipe()
        themet.standardError = errors
        themet.standardOutput = FileHandle.nullDevice
        try themet.run()
        let message = await BlockingIO.onThread {
            themet.waitUntilExit()
            return String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        }
        #expect(themet.terminationStatus == 64)
        #expect(message.contains("--access-log") && message.contains("/nonexistent-dir/access.log"))
    }
}
