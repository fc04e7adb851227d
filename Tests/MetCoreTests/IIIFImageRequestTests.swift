import Testing

@testable import MetCore
@testable import MetEngine

/// The IIIF Image API 3.0's request syntax (§4) and its reading against a picture's size, from
/// the specification's own examples and rules.
@Suite("IIIF image requests: strict syntax, and regions and sizes as the specification reads them")
struct IIIFImageRequestTests {
    /// A 4,000 × 3,000 picture.
    static let bounds = IIIFImageBounds(width: 4_000, height: 3_000)

    /// The canonical parameters a request comes to for `bounds`.
    static func canonical(_ parameters: String, bounds: IIIFImageBounds = bounds) throws -> String {
        let request = try IIIFImageRequest.parse("1/0/" + parameters)
        guard case .image(let image) = request.operation else { throw IIIFImageRequest.Failure.invalid("not an image") }
        return try image.plan(within: bounds).canonical
    }

    /// How parsing `path` (and planning it `within` a picture's bounds) ends: "accepted", or what
    /// it is refused as ("400", "404", "501", "no route").
    static func outcome(_ path: String, within bounds: IIIFImageBounds? = nil) -> String {
        do throws(IIIFImageRequest.Failure) {
            let request = try IIIFImageRequest.parse(path)
            if let bounds, case .image(let parameters) = request.operation { _ = try parameters.plan(within: bounds) }
            return "accepted"
        } catch {
            switch error {
            case .invalid: return "400"
            case .unsupported: return "501"
            case .noSuchImage: return "404"
            case .notARoute: return "no route"
            }
        }
    }

    @Test func theThreeShapesOfPath() throws {
        #expect(try IIIFImageRequest.parse("436535/0").operation == .base)
        #expect(
            try IIIFImageRequest.parse("436535/2/info.json")
                == IIIFImageRequest(objectID: 436_535, index: 2, operation: .info))
        let image = try IIIFImageRequest.parse("436535/0/full/max/0/default.jpg")
        #expect(
            image.operation
                == .image(
                    .init(
                        region: .full, size: .init(form: .max, upscale: false), mirrored: false, quarters: 0,
                        quality: .default, format: .jpeg)))
    }

    @Test(arguments: [
        // Regions (§4.1).
        ("full/max/0/default.jpg", "full/max/0/default.jpg"),
        ("square/max/0/default.jpg", "500,0,3000,3000/max/0/default.jpg"),
        ("0,0,4000,3000/max/0/default.jpg", "full/max/0/default.jpg"),
        ("125,15,120,140/max/0/default.jpg", "125,15,120,140/max/0/default.jpg"),
        ("3900,2900,500,500/max/0/default.jpg", "3900,2900,100,100/max/0/default.jpg"),
        ("pct:41.6,7.5,40,70/max/0/default.jpg", "1664,225,1600,2100/max/0/default.jpg"),
        ("pct:0,0,100,100/max/0/default.jpg", "full/max/0/default.jpg"),
        // Sizes (§4.2).
        ("full/1000,/0/default.jpg", "full/1000,750/0/default.jpg"),
        ("full/,300/0/default.jpg", "full/400,300/0/default.jpg"),
        ("full/pct:50/0/default.jpg", "full/2000,1500/0/default.jpg"),
        ("full/1000,1000/0/default.jpg", "full/1000,1000/0/default.jpg"),
        ("full/!800,800/0/default.jpg", "full/800,600/0/default.jpg"),
        ("full/!8000,8000/0/default.jpg", "full/max/0/default.jpg"),
        ("full/^!8000,8000/0/default.jpg", "full/max/0/default.jpg"),
        ("0,0,400,300/^800,/0/default.jpg", "0,0,400,300/^800,600/0/default.jpg"),
        ("0,0,400,300/^max/0/default.jpg", "0,0,400,300/^4000,3000/0/default.jpg"),
        ("0,0,400,300/^pct:200/0/default.jpg", "0,0,400,300/^800,600/0/default.jpg"),
        ("full/4000,3000/0/default.jpg", "full/max/0/default.jpg"),
        // Rotation, quality and format (§4.3–4.5).
        ("full/max/90/default.jpg", "full/max/90/default.jpg"),
        ("full/max/!180/gray.png", "full/max/!180/gray.png"),
        ("full/max/360/bitonal.webp", "full/max/0/bitonal.webp"),
        ("full/max/270.0/color.jpg", "full/max/270/color.jpg"),
    ])
    func parametersComeToTheirCanonicalForm(parameters: String, canonical: String) throws {
        #expect(try Self.canonical(parameters) == canonical)
    }

    @Test(arguments: [
        // Not the syntax: 400.
        "1/0/full/max/0/default", "1/0/Full/max/0/default.jpg",
        "1/0/0,0,10/max/0/default.jpg", "1/0/0,0,10,10,10/max/0/default.jpg", "1/0/0,0,0,10/max/0/default.jpg",
        "1/0/-1,0,10,10/max/0/default.jpg", "1/0/+1,0,10,10/max/0/default.jpg", "1/0/1e3,0,10,10/max/0/default.jpg",
        "1/0/pct:0,0,0,50/max/0/default.jpg", "1/0/pct:.5,0,10,10/max/0/default.jpg",
        "1/0/pct:5.,0,10,10/max/0/default.jpg", "1/0/full/full/0/default.jpg", "1/0/full/,/0/default.jpg",
        "1/0/full/0,/0/default.jpg", "1/0/full/!100,/0/default.jpg", "1/0/full/pct:0/0/default.jpg",
        "1/0/full/^^max/0/default.jpg", "1/0/full/max/-90/default.jpg", "1/0/full/max/361/default.jpg",
        "1/0/full/max/0/native.jpg", "1/0/full/max/0/default.bmp", "1/0/full/max/0/default.", "1/0/full/max/0/.jpg",
        "1/0/full/1234567890,/0/default.jpg",
        "1/0/full/max/0/default.jpg?x", "1/0/full/max/0/default.JPG",
    ])
    func malformedRequestsAre400(path: String) {
        #expect(Self.outcome(path) == "400")
    }

    @Test(arguments: [
        "1/0/full/max/45/default.jpg", "1/0/full/max/!22.5/default.jpg", "1/0/full/max/0/default.tif",
        "1/0/full/max/0/default.gif", "1/0/full/max/0/default.pdf", "1/0/full/max/0/default.jp2",
    ])
    func validButUnofferedFeaturesAre501(path: String) {
        #expect(Self.outcome(path) == "501")
    }

    @Test(arguments: [
        "0/0/info.json", "01/0/info.json", "1/01/info.json", "2147483648/0/info.json", "1/1234567890/info.json",
        "0/0/full/max/0/default.jpg",
    ])
    func digitsThatNameNoPictureAre404(path: String) {
        #expect(Self.outcome(path) == "404")
    }

    @Test(arguments: [
        "1", "1/0/full", "1/0/full/max/0", "1/0/full/max/0/default.jpg/", "-1/0/info.json", "1/x/info.json",
        "1/0/info.xml", "1/manifest.jsonx", "/manifest.json", "1/0/info.json/", "1/2/manifest.json", "",
        "1//full/max/0/default.jpg", "1/x/full/max/0/default.jpg", "a-b/0/full/max/0/default.jpg",
    ])
    func pathsOfNoIIIFShapeAreNoRoute(path: String) {
        #expect(Self.outcome(path) == "no route")
    }

    @Test(arguments: [
        // Outside the picture, larger than the region without ^, past the bounds with it.
        "4000,0,10,10/max/0/default.jpg", "0,3000,10,10/max/0/default.jpg", "pct:100,0,10,10/max/0/default.jpg",
        "full/4001,/0/default.jpg", "full/,3001/0/default.jpg", "full/pct:101/0/default.jpg",
        "full/4000,3001/0/default.jpg", "0,0,100,100/200,/0/default.jpg", "full/^4001,/0/default.jpg",
        "full/^pct:150/0/default.jpg", "full/^5000,3000/0/default.jpg",
    ])
    func requestsThePictureCannotSatisfyAre400(parameters: String) {
        #expect(Self.outcome("1/0/" + parameters, within: Self.bounds) == "400")
    }

    @Test func aDerivationTurnsAndTonesAsAsked() throws {
        guard case .image(let parameters) = try IIIFImageRequest.parse("1/0/0,0,400,300/200,/!90/bitonal.png").operation
        else {
            Issue.record("not an image request")
            return
        }
        let derivation = try parameters.plan(within: Self.bounds).derivation
        #expect(
            derivation
                == ImageDerivation(
                    x: 0, y: 0, regionWidth: 400, regionHeight: 300, width: 200, height: 150, mirrored: true,
                    quarters: 1, tone: .bitonal, encoding: .png))
    }

    @Test func infoListsTilesDownToOneAndHalvings() {
        let info = IIIFImageInfo(id: "http://localhost/iiif/1/0", bounds: Self.bounds)
        #expect(info.scaleFactors == [1, 2, 4, 8])
        #expect(
            info.sizes.map { [$0.width, $0.height] } == [
                [125, 94], [250, 188], [500, 375], [1000, 750], [2000, 1500], [4000, 3000],
            ])
    }
}
