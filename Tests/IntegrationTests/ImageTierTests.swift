import Foundation
import TestKit
import Testing

/// `/images/{path}` end to end: `themet` fetching pictures with its real curl client from
/// `met-fixture-server`, the fake image host, over loopback.
@Suite("Pictures end to end, through the curl client")
struct ImageTierTests {
    static let large = "/CRDImages/ep/web-large/DT1567.jpg"
    /// Generous upstream timeouts: on a loaded machine (parallel suites, a debug build making
    /// 4,000 px pictures) a slow answer must not become a retry, which the fake would count.
    static let patient = ["--upstream-connect-timeout", "30s", "--upstream-timeout", "60s"]

    /// The fake host's own bytes for `path`, asked of it directly.
    static func hostBytes(_ servers: Servers, _ path: String) async throws -> Data {
        try await HTTPClient.request(servers.fake.baseURL + path).body
    }

    @Test func oneHundredConcurrentMissesAreOneRequestToTheImageHost() async throws {
        let servers = try await Servers.start(themet: Self.patient)
        let results = try await withThrowingTaskGroup(of: HTTPResult.self) { group in
            for _ in 0..<100 { group.addTask { try await servers.get("/images" + Self.large) } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        let expected = try await Self.hostBytes(servers, Self.large)
        for result in results {
            #expect(result.status == 200)
            #expect(result.body == expected)
            #expect(result.header("Content-Type") == "image/jpeg")
        }
        // One from themet, one from this test.
        #expect(try await servers.upstreamStats().paths[Self.large] == 2)
    }

    @Test func rangesConditionalsAndHead() async throws {
        let servers = try await Servers.start(themet: Self.patient)
        let route = "/images" + Self.large
        let whole = try await servers.get(route)
        let bytes = [UInt8](whole.body)
        let etag = try #require(whole.header("ETag"))
        let length = bytes.count
        #expect(whole.header("Accept-Ranges") == "bytes")
        #expect(whole.header("Last-Modified") != nil)

        let first = try await servers.get(route, headers: ["Range": "bytes=0-0"])
        #expect(first.status == 206 && [UInt8](first.body) == [bytes[0]])
        #expect(first.header("Content-Range") == "bytes 0-0/\(length)")
        let last = try await servers.get(route, headers: ["Range": "bytes=-500"])
        #expect(last.status == 206 && [UInt8](last.body) == Array(bytes.suffix(500)))
        let middle = try await servers.get(route, headers: ["Range": "bytes=1000-1999"])
        #expect(middle.status == 206 && [UInt8](middle.body) == Array(bytes[1000...1999]))
        let beyond = try await servers.get(route, headers: ["Range": "bytes=\(length)-"])
        #expect(beyond.status == 416 && beyond.header("Content-Range") == "bytes */\(length)")
        let stale = try await servers.get(route, headers: ["Range": "bytes=0-9", "If-Range": "\"not-it\""])
        #expect(stale.status == 200 && [UInt8](stale.body) == bytes)
        let current = try await servers.get(route, headers: ["Range": "bytes=0-9", "If-Range": etag])
        #expect(current.status == 206 && current.body.count == 10)

        let unchanged = try await servers.get(route, headers: ["If-None-Match": etag])
        #expect(unchanged.status == 304 && unchanged.body.isEmpty)
        let head = try await servers.get(route, method: "HEAD")
        #expect(head.status == 200 && head.body.isEmpty && head.header("Content-Length") == String(length))
        #expect(try await servers.upstreamStats().paths[Self.large] == 1)
    }

    @Test func aPictureOnDiskIsSentFromItsFile() async throws {
        let servers = try await Servers.start(themet: Self.patient)
        let route = "/images/CRDImages/ep/original/DT1567.jpg"
        let expected = [UInt8](try await servers.get(route).body)
        servers.themet.signal(SIGTERM)  // which writes the picture files out
        _ = await servers.themet.waitForExit()
        let restarted = try await servers.restartingThemet(Self.patient)
        defer { restarted.themet.stop() }
        let whole = try await restarted.get(route)
        #expect(whole.status == 200 && [UInt8](whole.body) == expected)
        let middle = try await restarted.get(route, headers: ["Range": "bytes=1000-1999"])
        #expect(middle.status == 206 && [UInt8](middle.body) == Array(expected[1000...1999]))
        let head = try await restarted.get(route, method: "HEAD")
        #expect(head.status == 200 && head.header("Content-Length") == String(expected.count))
        // Two more plain hits: one response, shared, whose file is opened for each.
        for _ in 0..<2 {
            let again = try await restarted.get(route)
            #expect(again.status == 200 && [UInt8](again.body) == expected)
        }
        // The whole picture three times and the range went out of the file; HEAD sends no body.
        #expect(try await Self.fileBodies(restarted) == 4)

        // The file changed in place behind the tier's back: never sent, the bytes memory holds are.
        let directory = restarted.dataDirectory + "/images/files"
        let name = try #require(
            try FileManager.default.subpathsOfDirectory(atPath: directory).first { $0.hasSuffix(".img") })
        let path = directory + "/" + name
        try Data(expected.map { $0 ^ 1 }).write(to: URL(fileURLWithPath: path))
        var times = [timespec](repeating: timespec(tv_sec: time(nil) + 1, tv_nsec: 0), count: 2)
        #expect(utimensat(AT_FDCWD, path, &times, 0) == 0)
        let afterDamage = try await restarted.get(route)
        #expect(afterDamage.status == 200 && [UInt8](afterDamage.body) == expected)
        #expect(try await Self.fileBodies(restarted) == 4)
        #expect(try await servers.upstreamStats().paths[route.dropFirst("/images".count).description] == 1)
    }

    /// `themet_image_file_bodies_total` as `servers`' `/metrics` shows it.
    static func fileBodies(_ servers: Servers) async throws -> Int? {
        let metrics = String(decoding: try await servers.get("/metrics").body, as: UTF8.self)
        let line = metrics.split(separator: "\n").first { $0.hasPrefix("themet_image_file_bodies_total ") }
        return line.flatMap { Int($0.split(separator: " ")[1]) }
    }

    @Test func anExpiredPictureIsRevalidatedWithA304AndNoBody() async throws {
        let servers = try await Servers.start(
            fake: ["--image-max-age", "1"], themet: ["--stale-while-revalidate", "0"] + Self.patient)
        let route = "/images" + Self.large
        let first = try await servers.get(route)
        try await Task.sleep(for: .milliseconds(2_100))
        let second = try await servers.get(route)
        #expect(second.status == 200 && second.body == first.body)
        #expect(second.header("ETag") == first.header("ETag"))
        let stats = try await HTTPClient.request(servers.fake.baseURL + "/__stats").json()
        #expect((stats["paths"] as? [String: Int])?[Self.large] == 2)
        #expect(stats["notModified"] as? Int == 1)
    }

    @Test(arguments: [
        "/CRDImages/ts/original/bomb.jpg", "/CRDImages/ts/original/not-an-image.jpg",
        "/CRDImages/ts/original/truncated.jpg", "/CRDImages/ts/original/oversized.jpg",
    ])
    func whatIsNotAWholePictureWithinBoundsIsA502NeverStored(path: String) async throws {
        let servers = try await Servers.start(themet: Self.patient)
        for _ in 0..<2 {
            let response = try await servers.get("/images" + path)
            #expect(response.status == 502)
            #expect(try response.json()["code"] as? String == "upstream_malformed")
        }
        // Never stored: the second request asked again.
        #expect(try await servers.upstreamStats().paths[path] == 2)
        let files = try FileManager.default.subpathsOfDirectory(atPath: servers.dataDirectory + "/images/files")
        #expect(!files.contains { $0.hasSuffix(".img") }, "\(files)")
    }

    /// Targets as a hostile client writes them on the wire, each outside the image host's shapes:
    /// climbing out with dot segments (raw or percent-encoded), encoded slashes and NULs, another
    /// rendition or extension, upper case where the host has none, a name past 200 bytes.
    static let hostilePaths = [
        "/images/CRDImages/ep/original/..%2F..%2F..%2Fetc%2Fpasswd.jpg",
        "/images/CRDImages/ep/%2E%2E/%2E%2E/DT1567.jpg",
        "/images/CRDImages/ep/original/DT1567.jpg%00.png",
        "/images/CRDImages/ep/original/DT1567%2Fjpg.jpg",
        "/images/CRDImages/ep/thumbnail/DT1567.jpg",
        "/images/CRDImages/EP/original/DT1567.jpg",
        "/images/CRDImages/ep/original/DT1567.svg",
        "/images/CRDImages/ep/original/" + String(repeating: "a", count: 200) + ".jpg",
        "/images/CRDImages/ep/original/",
        "/images/CRDImages",
    ]

    @Test func pathsNotOfTheImageHostsShapesAre400sThatNeverReachIt() async throws {
        let servers = try await Servers.start(themet: Self.patient)
        for path in Self.hostilePaths {
            let exchange = try await RawHTTP.exchange(
                port: servers.themet.port,
                request: Array("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".utf8))
            #expect(exchange.text.hasPrefix("HTTP/1.1 400 "), "\(path): \(exchange.text.prefix(300))")
            let problem = try JSONSerialization.jsonObject(with: Data(try exchange.body())) as? [String: Any]
            #expect(problem?["code"] as? String == "invalid_image_path", "\(path): \(problem ?? [:])")
        }
        // Not one of them was asked of the image host.
        #expect(try await servers.upstreamStats().total == 0)
    }

    @Test func aBlockOfTheImageHostPausesPicturesOnly() async throws {
        // A second fake as the image host, blocking after its first request; the API's is healthy.
        let imageHost = try await RunningProcess(
            BuiltProducts.fixtureServer,
            ["--port", "0", "--fixtures", BuiltProducts.fixtures.path, "--block-after", "1"])
        let servers = try await Servers.start(themet: ["--image-upstream", imageHost.baseURL] + Self.patient)
        #expect(try await servers.get("/images" + Self.large).status == 200)
        let blocked = try await servers.get("/images/CRDImages/ep/original/DT1567.jpg")
        #expect(blocked.status == 503 && blocked.header("Retry-After") != nil)
        #expect(try blocked.json()["code"] as? String == "upstream_blocked")
        // The breaker keeps further pictures from the host; records keep flowing from the API.
        #expect(try await servers.get("/images/CRDImages/ep/web-large/DT1947.jpg").status == 503)
        #expect(try await servers.get("/objects/436535").status == 200)
        let imageStats = try await HTTPClient.request(imageHost.baseURL + "/__stats").json()
        #expect(imageStats["total"] as? Int == 2)
        #expect(try await servers.upstreamStats().paths.keys.allSatisfy { !$0.hasPrefix("/CRDImages") })
    }

    @Test func aKilledServerNeverServesATornPictureAfterItsRestart() async throws {
        let servers = try await Servers.start(themet: Self.patient)
        let paths = [
            "/CRDImages/ep/original/DT1567.jpg", "/CRDImages/ep/original/DT1947.jpg",
            "/CRDImages/ep/original/DP130999.jpg", "/CRDImages/as/original/DP251139.jpg",
        ]
        // The fake makes each 4,000 px picture once, now, so that themet's fetches are all writing.
        var expected: [String: Data] = [:]
        for path in paths { expected[path] = try await Self.hostBytes(servers, path) }
        // Asked at once, killed while some are being written.
        let asked = Task {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for path in paths { group.addTask { _ = try? await servers.get("/images" + path) } }
                try await group.waitForAll()
            }
        }
        _ = try await servers.get("/images" + paths[0])
        servers.themet.signal(SIGKILL)
        _ = await servers.themet.waitForExit()
        _ = try? await asked.value
        let restarted = try await servers.restartingThemet(Self.patient)
        for path in paths {
            let served = try await restarted.get("/images" + path)
            #expect(served.status == 200)
            #expect(served.body == expected[path], "\(path)")
        }
        restarted.themet.stop()
    }
}
