import MetImaging
import Testing

@testable import MetCore
@testable import MetEngine

/// `/images/{path}` through the whole service below the HTTP layer: the fake upstream stands for
/// the image host (no sockets, a manual clock).
@Suite("Pictures: cached, validated, conditional and ranged")
struct ImageRouteTests {
    static let path = "/CRDImages/ep/web-large/DT1567.jpg"
    static let route = "/images" + path
    static let validators = UpstreamValidators(etag: "\"host-1\"", lastModified: "Wed, 23 Oct 2019 00:00:00 GMT")
    static let jpeg: [UInt8] = {
        let band = try! Picture.sines(width: 64, height: 48, across: 1, down: 2).scaled(by: 60, plus: 120)
        return try! Picture.rgb(band, band, band).jpeg()
    }()

    static func picture(_ body: [UInt8] = jpeg, maxAge: Int = 432_000) -> FakeUpstream.Answer {
        .reply(
            UpstreamReply(
                status: 200, contentType: "image/jpeg", body: body, validators: validators,
                cacheControl: "max-age=\(maxAge)"))
    }

    static let notModified = FakeUpstream.Answer.reply(
        UpstreamReply(status: 304, contentType: nil, body: [], validators: validators, cacheControl: "max-age=60"))

    /// A harness whose image host answers `path` with `answers` in turn.
    static func harness(_ answers: [FakeUpstream.Answer] = [picture()]) -> Harness {
        let harness = Harness()
        harness.upstream.answer(path: path, withEach: answers)
        return harness
    }

    @Test func aMissIsFetchedOnceThenAHitIsAnsweredOnTheLoopThread() async throws {
        let harness = Self.harness()
        let first = await harness.get(Self.route)
        #expect(first.status == 200 && first.body == Self.jpeg)
        #expect(first.headers["Content-Type"] == "image/jpeg")
        #expect(first.headers["ETag"] == ETag.strong(for: Self.jpeg))
        #expect(first.headers["Last-Modified"] == Self.validators.lastModified)
        #expect(first.headers["Accept-Ranges"] == "bytes")
        #expect(first.headers["Cache-Status"] == "TheMet; fwd=uri-miss; stored")
        let second = try #require(harness.getImmediately(Self.route))
        #expect(second.status == 200 && second.body == Self.jpeg)
        #expect(second.headers["Cache-Status"]?.hasPrefix("TheMet; hit;") == true)
        #expect(harness.upstream.calls == [Self.path])
    }

    @Test func plainHitsShareOneResponseASecond() async throws {
        let harness = Self.harness()
        _ = await harness.get(Self.route)
        harness.time.advance(by: 2.2)
        let first = try #require(harness.getImmediately(Self.route))
        harness.time.advance(by: 0.3)
        let second = try #require(harness.getImmediately(Self.route))
        let shared = try #require(first.shared)
        #expect(second.shared === shared && second.body == Self.jpeg)
        harness.time.advance(by: 1)
        let later = try #require(harness.getImmediately(Self.route))
        #expect(later.shared !== shared && later.headers["Age"] == "3")
        // Conditions, ranges and HEAD are answered for themselves.
        #expect(harness.getImmediately(Self.route, headers: ["Range": "bytes=0-1"])?.shared == nil)
        #expect(harness.getImmediately(Self.route, headers: ["If-None-Match": "\"x\""])?.shared == nil)
        let head = harness.service.readyResponse(to: Request(method: "HEAD", target: Self.route))
        #expect(head?.status == 200 && head?.shared == nil)
    }

    @Test func concurrentMissesMakeOneUpstreamCall() async {
        let harness = Self.harness()
        harness.upstream.hold()
        await withTaskGroup(of: Int.self) { group in
            for _ in 0..<100 { group.addTask { await harness.get(Self.route).status } }
            await harness.upstream.waitForCalls(1)
            harness.upstream.release()
            for await status in group { #expect(status == 200) }
        }
        #expect(harness.upstream.calls == [Self.path])
    }

    @Test func ifNoneMatchOrAnEqualIfModifiedSinceIs304() async {
        let harness = Self.harness()
        let etag = await harness.get(Self.route).headers["ETag"] ?? ""
        let byTag = await harness.get(Self.route, headers: ["If-None-Match": etag])
        #expect(byTag.status == 304 && byTag.body.isEmpty && byTag.headers["ETag"] == etag)
        let byDate = await harness.get(
            Self.route, headers: ["If-Modified-Since": Self.validators.lastModified ?? ""])
        #expect(byDate.status == 304)
        // If-None-Match decides when both are sent.
        let both = await harness.get(
            Self.route,
            headers: ["If-None-Match": "\"other\"", "If-Modified-Since": Self.validators.lastModified ?? ""])
        #expect(both.status == 200)
    }

    @Test(
        arguments: [
            ("bytes=0-0", 206, "bytes 0-0/L", 0...0),
            ("bytes=-500", 206, "bytes L-500-L-1/L", nil),
            ("bytes=100-199", 206, "bytes 100-199/L", 100...199),
            ("bytes=100-", 206, "bytes 100-L-1/L", nil),
            ("bytes=0-99999999", 206, "bytes 0-L-1/L", nil),
            ("bytes=99999999-", 416, "bytes */L", nil),
            ("bytes=0-1,5-9", 200, nil, nil),
            ("items=0-1", 200, nil, nil),
            ("bytes=9-1", 200, nil, nil),
        ] as [(String, Int, String?, ClosedRange<Int>?)])
    func oneRangeIsAnswered(range: String, status: Int, contentRange: String?, bytes: ClosedRange<Int>?) async {
        let harness = Self.harness()
        let length = Self.jpeg.count
        let response = await harness.get(Self.route, headers: ["Range": range])
        #expect(response.status == status)
        let expected = contentRange.map { text in
            text.replacingOccurrences(of: "L-500-L-1", with: "\(length - 500)-\(length - 1)")
                .replacingOccurrences(of: "L-1", with: "\(length - 1)").replacingOccurrences(of: "L", with: "\(length)")
        }
        #expect(response.headers["Content-Range"] == expected)
        if let bytes { #expect(response.body == Array(Self.jpeg[bytes])) }
        if status == 206, range == "bytes=-500" { #expect(response.body == Array(Self.jpeg.suffix(500))) }
        if status == 200 { #expect(response.body == Self.jpeg) }
        if status == 416 { #expect(response.headers["Content-Type"] == Response.problemContentType) }
    }

    @Test func ifRangeAppliesTheRangeOnlyWhileItNamesThisPicture() async {
        let harness = Self.harness()
        let etag = await harness.get(Self.route).headers["ETag"] ?? ""
        let current = await harness.get(Self.route, headers: ["Range": "bytes=0-9", "If-Range": etag])
        #expect(current.status == 206 && current.body.count == 10)
        let byDate = await harness.get(
            Self.route, headers: ["Range": "bytes=0-9", "If-Range": Self.validators.lastModified ?? ""])
        #expect(byDate.status == 206)
        let stale = await harness.get(Self.route, headers: ["Range": "bytes=0-9", "If-Range": "\"old-tag\""])
        #expect(stale.status == 200 && stale.body == Self.jpeg)
        let weak = await harness.get(Self.route, headers: ["Range": "bytes=0-9", "If-Range": "W/" + etag])
        #expect(weak.status == 200)
    }

    @Test func anExpiredPictureIsRevalidatedAndA304CostsNoBody() async throws {
        let harness = Self.harness([Self.picture(maxAge: 100), Self.notModified])
        let first = await harness.get(Self.route)
        harness.time.advance(by: 101)
        let second = await harness.get(Self.route)
        #expect(second.status == 200 && second.body == Self.jpeg)
        #expect(second.headers["ETag"] == first.headers["ETag"])
        #expect(second.headers["Cache-Control"]?.hasPrefix("max-age=60") == true)
        #expect(harness.upstream.conditions == [nil, Self.validators])
        // Renewed: fresh again for the 304's max-age.
        #expect(harness.getImmediately(Self.route)?.status == 200)
    }

    @Test(arguments: [
        Array("<html><body>oops</body></html>".utf8), Array(jpeg.prefix(jpeg.count / 2)),
        [0xFF, 0xD8, 0xFF, 0xC0, 0x00, 0x11, 0x08, 0xEA, 0x60, 0xEA, 0x60, 0x03] + [UInt8](repeating: 1, count: 9)
            + [0xFF, 0xD9],
    ])
    func whatIsNotAWholePictureWithinBoundsIsA502AndNeverStored(body: [UInt8]) async {
        let harness = Self.harness([Self.picture(body)])
        let response = await harness.get(Self.route)
        #expect(response.status == 502)
        #expect(String(decoding: response.body, as: UTF8.self).contains("upstream_malformed"))
        _ = await harness.get(Self.route)
        #expect(harness.upstream.calls == [Self.path, Self.path])
    }

    @Test func aMissingPictureIsANegativeEntry() async {
        let harness = Self.harness([.reply(UpstreamReply(status: 404, contentType: "text/html", body: []))])
        let response = await harness.get(Self.route)
        #expect(response.status == 404)
        #expect(String(decoding: response.body, as: UTF8.self).contains("image_not_found"))
        #expect(await harness.get(Self.route).status == 404)
        #expect(harness.upstream.calls == [Self.path])
    }

    @Test func theImageHostsBlockPausesPicturesOnly() async {
        let harness = Self.harness([
            .reply(UpstreamReply(status: 403, contentType: "text/html", body: Array("<html>Incapsula</html>".utf8)))
        ])
        harness.upstream.answer(
            .object(id: 1),
            with: .reply(
                UpstreamReply(status: 200, contentType: "application/json", body: Array(Sample.object(1).utf8))))
        let blocked = await harness.get(Self.route)
        #expect(blocked.status == 503 && blocked.headers["Retry-After"] != nil)
        #expect(String(decoding: blocked.body, as: UTF8.self).contains("image host"))
        // No second call while the image host's breaker is open; records still flow.
        #expect(await harness.get("/images/CRDImages/ep/original/DT1567.jpg").status == 503)
        #expect(await harness.get("/objects/1").status == 200)
        let engine = harness.service.engine
        #expect(engine.images.monitor.blockedUntil(at: harness.time.now()) != nil)
        #expect(engine.monitor.blockedUntil(at: harness.time.now()) == nil)
        #expect(harness.upstream.calls == [Self.path, "/public/collection/v1/objects/1"])
    }

    @Test(arguments: [
        "/images/CRDImages/ep/thumb/DT1567.jpg", "/images/CRDImages/EP/original/DT1567.jpg",
        "/images/CRDImages/ep/original/DT1567.gif", "/images/CRDImages/ep/original/.hidden.jpg",
        "/images/other/ep/original/DT1567.jpg", "/images/CRDImages/ep/original/a/b.jpg",
        "/images/CRDImages/ep/original/%2E%2E.jpg", "/images/CRDImages/../original/DT1567.jpg",
        "/images/CRDImages/ep/original/DT%201567.jpg",
    ])
    func onlyTheImageHostsPathShapesAreAsked(target: String) async {
        let harness = Self.harness()
        let response = await harness.get(target)
        #expect(response.status == 400)
        #expect(String(decoding: response.body, as: UTF8.self).contains("invalid_image_path"))
        #expect(harness.upstream.calls.isEmpty)
    }
}
