import Foundation
import ImageHeaders
import Testing

@testable import MetEngine
@testable import MetFixtures

@Suite("The fake image host: a picture for every record's path, made the same everywhere")
struct FixtureImagesTests {
    static let archive = try! FixtureArchive(directory: Repository.fixtures, syntheticCount: 200)

    @Test("A fixture record's original is a 4,000 px JPEG, its web-large about 500 px")
    func fixtureShapes() async throws {
        let images = FixtureImages(archive: Self.archive)
        let path = "/CRDImages/ep/original/DT1567.jpg"
        let original = try #require(try await images.image(at: path))
        let large = try #require(try await images.image(at: "/CRDImages/ep/web-large/DT1567.jpg"))
        let originalHeader = try ImageHeader.read(original.bytes).get()
        let largeHeader = try ImageHeader.read(large.bytes).get()
        #expect(originalHeader.format == .jpeg && max(originalHeader.width, originalHeader.height) == 4_000)
        #expect(largeHeader.format == .jpeg && (500..<650).contains(max(largeHeader.width, largeHeader.height)))
        #expect(original.contentType == "image/jpeg")
        #expect(
            original.etag
                == "\"\(String(FixtureImages.seed(path), radix: 16))-\(String(original.bytes.count, radix: 16))\"")
        #expect(original.lastModified.hasSuffix(" 00:00:00 GMT"))
    }

    @Test("The same path gives the same bytes from a second host")
    func deterministic() async throws {
        let path = "/CRDImages/ep/web-large/DT1567.jpg"
        let first = try #require(try await FixtureImages(archive: Self.archive).image(at: path))
        let second = try #require(try await FixtureImages(archive: Self.archive).image(at: path))
        #expect(first.bytes == second.bytes && first.lastModified == second.lastModified)
    }

    @Test("Synthetic records' pictures exist exactly where their records name them")
    func synthetic() async throws {
        let images = FixtureImages(archive: Self.archive)
        var named = 0
        for id in 1...40 {
            let body = Self.archive.answer(path: "/public/collection/v1/objects/\(id)", query: []).body
            let record = try JSONDecoder().decode(Record.self, from: Data(body))
            for url in [record.primaryImage, record.primaryImageSmall] + record.additionalImages where !url.isEmpty {
                let path = String(url.dropFirst("https://images.metmuseum.org".count))
                #expect(Self.archive.hasImage(path), "\(path)")
                named += 1
            }
            if record.primaryImage.isEmpty {
                #expect(!Self.archive.hasImage("/CRDImages/ad/original/SYN\(id).jpg"))
            }
        }
        #expect(named > 40)
        let header = try ImageHeader.read(try #require(try await images.image(at: Self.firstSyntheticOriginal())).bytes)
            .get()
        #expect((1_200..<3_000).contains(max(header.width, header.height)))
        for absent in [
            "/CRDImages/ep/original/DT1567.png", "/CRDImages/ep/original/SYN201.jpg", "/CRDImages/ep/thumb/DT1567.jpg",
            "/CRDImages/ep/original/SYN01.jpg", "/CRDImages/../original/DT1567.jpg", "/CRDImages/ep/original/",
        ] {
            #expect(try await images.image(at: absent) == nil, "\(absent)")
        }
    }

    @Test("The specimens are what their names say")
    func specimens() async throws {
        let images = FixtureImages(archive: Self.archive)
        func read(_ name: String) async throws -> Result<ImageHeader, ImageHeaderError> {
            ImageHeader.read(try #require(try await images.image(at: "/CRDImages/ts/original/\(name)")).bytes)
        }
        #expect(try await read("specimen.png") == .success(ImageHeader(format: .png, width: 640, height: 480)))
        #expect(try await read("bomb.jpg") == .success(ImageHeader(format: .jpeg, width: 60_000, height: 60_000)))
        #expect(try await read("not-an-image.jpg") == .failure(.notAnImage))
        guard case .failure(.truncated) = try await read("truncated.jpg") else {
            Issue.record("the truncated specimen reads whole")
            return
        }
        let oversized = try #require(try await images.image(at: "/CRDImages/ts/original/oversized.jpg"))
        #expect(oversized.bytes.count > 34 << 20)
        #expect(try ImageHeader.read(oversized.bytes).get() == ImageHeader(format: .jpeg, width: 640, height: 480))
    }

    /// The `primaryImage` path of the first public-domain synthetic record.
    static func firstSyntheticOriginal() throws -> String {
        for id in 1...200 {
            let body = archive.answer(path: "/public/collection/v1/objects/\(id)", query: []).body
            let record = try JSONDecoder().decode(Record.self, from: Data(body))
            if !record.primaryImage.isEmpty {
                return String(record.primaryImage.dropFirst("https://images.metmuseum.org".count))
            }
        }
        throw CocoaError(.fileNoSuchFile)
    }

    struct Record: Decodable {
        let primaryImage: String
        let primaryImageSmall: String
        let additionalImages: [String]
    }
}
