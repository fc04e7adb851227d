import MetImaging
import Testing

@testable import MetEngine

@Suite("Image resource: the image host's replies judged by their bytes' header, and revalidated")
struct ImageResourceTests {
    static let path = "/CRDImages/ep/web-large/DT1567.jpg"
    static let resource = ImageResource(path: path, maxPixels: 1_000_000, maxBytes: 1 << 20)
    static let jpeg: [UInt8] = {
        let band = try! Picture.sines(width: 120, height: 80, across: 1, down: 1).scaled(by: 60, plus: 120)
        return try! Picture.rgb(band, band, band).jpeg()
    }()
    static let validators = UpstreamValidators(etag: "\"v1\"", lastModified: "Wed, 23 Oct 2019 00:00:00 GMT")

    static func reply(_ status: Int, _ body: [UInt8], type: String? = "image/jpeg") -> UpstreamReply {
        UpstreamReply(
            status: status, contentType: type, body: body, validators: validators, cacheControl: "max-age=432000")
    }

    @Test func aPictureIsReadForItsTypeAndSizeWithTheHostsLifetime() {
        let details = ImageDetails(contentType: "image/jpeg", width: 120, height: 80, upstream: Self.validators)
        #expect(
            Self.resource.judge(Self.reply(200, Self.jpeg))
                == .success(.image(bytes: Self.jpeg, details: details, maxAge: 432_000)))
        // The type is the bytes', not the one the host claimed.
        #expect(
            Self.resource.judge(Self.reply(200, Self.jpeg, type: "text/plain"))
                == .success(.image(bytes: Self.jpeg, details: details, maxAge: 432_000)))
    }

    @Test(arguments: [
        Array("<html>not a picture</html>".utf8), [0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x10], [],
        // A frame of 60,000 × 60,000 pixels: measured, refused before any decode.
        [0xFF, 0xD8, 0xFF, 0xC0, 0x00, 0x11, 0x08, 0xEA, 0x60, 0xEA, 0x60, 0x03] + [UInt8](repeating: 1, count: 9)
            + [0xFF, 0xD9],
    ])
    func whatIsNotAWholePictureWithinBoundsIsMalformed(body: [UInt8]) {
        guard case .failure(.malformed) = Self.resource.judge(Self.reply(200, body)) else {
            Issue.record("accepted \(body.prefix(12))")
            return
        }
    }

    @Test func aPictureLargerThanTheBoundIsMalformed() {
        let small = ImageResource(path: Self.path, maxPixels: 1_000_000, maxBytes: 100)
        guard case .failure(.malformed) = small.judge(Self.reply(200, Self.jpeg)) else {
            Issue.record("accepted \(Self.jpeg.count) bytes over a bound of 100")
            return
        }
    }

    @Test func statusesOtherThan200() {
        #expect(Self.resource.judge(Self.reply(404, Array("<html>Not Found</html>".utf8))) == .success(.notFound))
        #expect(
            Self.resource.judge(Self.reply(403, Array("<html>Incapsula</html>".utf8), type: "text/html"))
                == .failure(.blocked))
        #expect(Self.resource.judge(Self.reply(503, [])) == .failure(.status(503)))
        // A 304 to a request that was not conditional is no answer.
        #expect(Self.resource.judge(Self.reply(304, [])) == .failure(.status(304)))
    }

    @Test func anExpiredCopyIsRevalidatedWithItsValidatorsAndA304RenewsIt() throws {
        let policy = FreshnessPolicy()
        let fresh = try #require(
            Self.resource.entry(
                from: try Self.resource.judge(Self.reply(200, Self.jpeg)).get(), key: Self.path, standIn: nil,
                storedAt: 1_000, policy: policy, compress: nil))
        #expect(fresh.freshUntil == 1_000 + 432_000 && fresh.kind == .image && fresh.gzipped == nil)
        let asked = Self.resource.revalidating(fresh)
        #expect(asked.conditions == Self.validators)
        let renewed = try #require(
            asked.entry(
                from: try asked.judge(UpstreamReply(status: 304, contentType: nil, body: [])).get(), key: Self.path,
                standIn: fresh, storedAt: 500_000, policy: policy, compress: nil))
        #expect(renewed.body == fresh.body && renewed.etag == fresh.etag)
        #expect(renewed.freshUntil == 500_000 + policy.image)
        // Without a copy, a 304 makes no entry.
        #expect(
            asked.entry(
                from: .notModified(Self.validators, maxAge: nil), key: Self.path, standIn: nil, storedAt: 0,
                policy: policy, compress: nil) == nil)
    }

    @Test func aPictureEntrysRecordKeepsItsDetails() throws {
        let entry = try #require(
            Self.resource.entry(
                from: try Self.resource.judge(Self.reply(200, Self.jpeg)).get(), key: Self.path, standIn: nil,
                storedAt: 1_000, policy: FreshnessPolicy(), compress: nil))
        let restored = try #require(CacheEntry.restored(record: entry.record, key: Self.path))
        #expect(restored.details == entry.details && restored.body == entry.body && restored.kind == .image)
    }

    @Test(
        arguments: [
            ("max-age=432000", 432_000.0), ("public, max-age=60", 60), ("no-store", 0), ("MAX-AGE=5", 5),
            ("max-age=-1", nil), ("private", nil),
        ] as [(String, Double?)])
    func maxAgeIsReadFromCacheControl(value: String, seconds: Double?) {
        #expect(ImageResource.maxAge(in: value) == seconds)
    }
}
