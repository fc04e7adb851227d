import Foundation
import ImageHeaders
import MetImaging
import Testing

@testable import MetCore
@testable import MetEngine

/// `/iiif/{id}/{n}/…` through the whole service below the HTTP layer, with libvips deriving: the
/// fake upstream stands for the API and the image host (no sockets, a manual clock).
@Suite("The IIIF Image API over an object's pictures")
struct IIIFImageRouteTests {
    static let original = "/CRDImages/ep/original/DT1567.jpg"
    static let second = "/CRDImages/ep/original/DT1568.png"
    /// A 640 × 480 JPEG and a 300 × 200 PNG.
    static let jpeg: [UInt8] = try! picture(width: 640, height: 480).jpeg()
    static let png: [UInt8] = try! picture(width: 300, height: 200).png()

    static func picture(width: Int, height: Int) throws -> Picture {
        let red = try Picture.sines(width: width, height: height, across: 1, down: 0).scaled(by: 100, plus: 128)
        let green = try Picture.sines(width: width, height: height, across: 0, down: 1).scaled(by: 100, plus: 128)
        return try Picture.rgb(red, green, red)
    }

    static func record(publicDomain: Bool = true) -> String {
        #"{"objectID":436535,"isPublicDomain":\#(publicDomain),"#
            + #""primaryImage":"https://images.metmuseum.org\#(original)","#
            + #""primaryImageSmall":"https://images.metmuseum.org/CRDImages/ep/web-large/DT1567.jpg","#
            + #""additionalImages":["https://images.metmuseum.org\#(second)","https://example.org/elsewhere.jpg"],"#
            + #""title":"Wheat Field with Cypresses"}"#
    }

    static func harness(publicDomain: Bool = true) -> Harness {
        let harness = Harness()
        harness.upstream.answer(
            .object(id: 436_535),
            with: .reply(
                UpstreamReply(
                    status: 200, contentType: "application/json", body: Array(record(publicDomain: publicDomain).utf8)))
        )
        for (path, body, type) in [(original, jpeg, "image/jpeg"), (second, png, "image/png")] {
            harness.upstream.answer(
                path: path,
                with: .reply(
                    UpstreamReply(
                        status: 200, contentType: type, body: body,
                        validators: UpstreamValidators(etag: "\"\(path.count)\"", lastModified: nil),
                        cacheControl: "max-age=432000")))
        }
        return harness
    }

    @Test func infoJSONDescribesThePictureAtLevel2() async throws {
        let harness = Self.harness()
        let response = await harness.get("/iiif/436535/0/info.json", headers: ["Host": "gallery.local:8080"])
        #expect(response.status == 200 && response.headers["Content-Type"] == "application/json")
        let info = try #require(try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any])
        #expect(info["id"] as? String == "http://gallery.local:8080/iiif/436535/0")
        #expect(info["type"] as? String == "ImageService3" && info["profile"] as? String == "level2")
        #expect(info["width"] as? Int == 640 && info["height"] as? Int == 480)
        #expect(info["@context"] as? String == "http://iiif.io/api/image/3/context.json")
        let ld = await harness.get("/iiif/436535/1/info.json", headers: ["Accept": "application/ld+json"])
        #expect(ld.headers["Content-Type"]?.hasPrefix("application/ld+json;profile=") == true)
        #expect(ld.text.contains(#""width":300,"height":200"#))
        let redirect = await harness.get("/iiif/436535/1", headers: ["Host": "gallery.local"])
        #expect(
            redirect.status == 303 && redirect.headers["Location"] == "http://gallery.local/iiif/436535/1/info.json")
    }

    @Test func aDerivativeIsMadeOnceThenServedFromMemoryOnTheLoop() async throws {
        let harness = Self.harness()
        let target = "/iiif/436535/0/full/!320,320/0/default.jpg"
        let first = await harness.get(target)
        #expect(first.status == 200 && first.headers["Content-Type"] == "image/jpeg")
        #expect(try ImageHeader.read(first.body).get() == ImageHeader(format: .jpeg, width: 320, height: 240))
        #expect(first.headers["Link"]?.contains("/iiif/436535/0/full/320,240/0/default.jpg>;rel=\"canonical\"") == true)
        // The same derivative by its canonical name, answered on the loop thread from memory.
        let again = try #require(harness.getImmediately("/iiif/436535/0/full/320,240/0/default.jpg"))
        #expect(again.status == 200 && again.body == first.body)
        let notModified = await harness.get(target, headers: ["If-None-Match": first.headers["ETag"] ?? ""])
        #expect(notModified.status == 304)
        #expect(harness.upstream.calls.filter { $0.hasPrefix("/CRDImages/") } == [Self.original])
    }

    @Test func plainHitsOnADerivativeShareOneResponseASecondPerHost() async throws {
        let harness = Self.harness()
        let target = "/iiif/436535/0/full/320,240/0/default.jpg"
        let gallery: HTTPFields = ["Host": "gallery.local"]
        _ = await harness.get(target, headers: gallery)
        let first = try #require(harness.getImmediately(target, headers: gallery))
        let shared = try #require(first.shared)
        let second = try #require(harness.getImmediately(target, headers: gallery))
        #expect(second.shared === shared && second.body == first.body)
        // Another host sees its own canonical link, in a response of its own.
        let other = try #require(harness.getImmediately(target, headers: ["Host": "other.local"]))
        #expect(other.shared !== shared)
        #expect(other.headers["Link"]?.hasPrefix("<http://other.local/iiif/436535/0/full/320,240/") == true)
        #expect(first.headers["Link"]?.hasPrefix("<http://gallery.local/iiif/436535/0/full/320,240/") == true)
        // A new second makes a new one; a condition or a range is answered for itself.
        harness.time.advance(by: 1)
        #expect(harness.getImmediately(target, headers: gallery)?.shared !== shared)
        let ranged = harness.getImmediately(target, headers: ["Host": "gallery.local", "Range": "bytes=0-1"])
        #expect(ranged?.status == 206 && ranged?.shared == nil)
    }

    @Test func concurrentRequestsForOneDerivativeDeriveItOnce() async {
        let harness = Self.harness()
        _ = await harness.get("/iiif/436535/0/info.json")
        let bodies = await withTaskGroup(of: [UInt8].self) { group in
            for _ in 0..<20 { group.addTask { await harness.get("/iiif/436535/0/0,0,256,256/128,/90/gray.png").body } }
            var bodies: [[UInt8]] = []
            for await body in group { bodies.append(body) }
            return bodies
        }
        #expect(Set(bodies).count == 1)
        #expect((try? ImageHeader.read(bodies[0]).get()) == ImageHeader(format: .png, width: 128, height: 128))
        // Two made: the picture's pyramid (a region is cut from it), then the derivative.
        let snapshot = harness.service.engine.images.derivationTime.snapshot
        #expect(snapshot.count == 2)
    }

    /// Deep zoom's tiles come from the picture's pyramid, made once: each tile is the same region
    /// as one cut from the original, whatever level it is read from.
    @Test func tilesComeFromOnePyramidAndShowTheirRegion() async throws {
        let harness = Self.harness()
        // 512 px tiles at scale factors 1 and 2 of the 640 × 480 picture, and a detail at 1/4.
        let tiles = [
            ("0,0,512,480", "512,480"), ("512,0,128,480", "128,480"), ("0,0,640,480", "320,240"),
            ("100,50,400,300", "100,75"), ("600,400,40,80", "40,80"),
        ]
        let whole = try Picture.decode(Self.jpeg)
        for (region, size) in tiles {
            let response = await harness.get("/iiif/436535/0/\(region)/\(size)/0/default.png")
            #expect(response.status == 200, "\(region)")
            let tile = try Picture.decode(response.body)
            let numbers = (region + "," + size).split(separator: ",").compactMap { Int($0) }
            #expect([tile.width, tile.height] == Array(numbers[4...]))
            let cut = try whole.cropped(x: numbers[0], y: numbers[1], width: numbers[2], height: numbers[3])
            #expect(abs(try tile.mean() - cut.mean()) < 2, "\(region) shows another part of the picture")
        }
        let images = harness.service.engine.images
        let original = try #require(images.cache.entry(for: Self.original))
        let pyramid = try #require(images.cache.entry(for: "iiif-pyramid \(Self.original) \(original.etag)"))
        #expect(try ImageHeader.read(pyramid.body).get() == ImageHeader(format: .tiff, width: 640, height: 480))
        // The pyramid once, and each derivative (the whole picture's made from the original).
        #expect(images.derivationTime.snapshot.count == 1 + tiles.count)
        #expect(harness.upstream.calls.filter { $0.hasPrefix("/CRDImages/") } == [Self.original])
    }

    @Test(arguments: [
        ("/iiif/436535/0/full/max/45/default.jpg", 501, "iiif_feature_not_supported"),
        ("/iiif/436535/0/full/max/0/default.tif", 501, "iiif_feature_not_supported"),
        ("/iiif/436535/0/full/641,/0/default.jpg", 400, "invalid_iiif_request"),
        ("/iiif/436535/0/640,0,1,1/max/0/default.jpg", 400, "invalid_iiif_request"),
        ("/iiif/436535/0/nowhere/max/0/default.jpg", 400, "invalid_iiif_request"),
        ("/iiif/436535/3/info.json", 404, "image_not_found"),
        ("/iiif/436535/2/info.json", 404, "image_not_found"),
    ])
    func refusalsAreProblemDocuments(target: String, status: Int, code: String) async {
        let response = await Self.harness().get(target)
        #expect(response.status == status)
        #expect(response.text.contains(#""code":"\#(code)""#), "\(response.text)")
    }

    @Test func anObjectOutsideThePublicDomainHasNoPictures() async {
        let response = await Self.harness(publicDomain: false).get("/iiif/436535/0/info.json")
        #expect(response.status == 404 && response.text.contains("not_public_domain"))
    }

    @Test func everyQualityAndFormatDecodes() async throws {
        let harness = Self.harness()
        for (suffix, format) in [("color.jpg", ImageHeader.Format.jpeg), ("gray.png", .png), ("bitonal.webp", .webp)] {
            let response = await harness.get("/iiif/436535/1/full/150,100/!180/" + suffix)
            #expect(response.status == 200)
            #expect(try ImageHeader.read(response.body).get() == ImageHeader(format: format, width: 150, height: 100))
        }
    }
}
