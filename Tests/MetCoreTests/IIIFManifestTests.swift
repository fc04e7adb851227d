import Foundation
import Testing

@testable import MetCore
@testable import MetEngine

@Suite("GET /iiif/{id}/manifest.json: IIIF Presentation 3 manifests")
struct IIIFManifestTests {
    /// A public-domain record with three images, two of them also given as other URLs.
    private static let record = #"""
        {"objectID":436535,"isPublicDomain":true,"title":"Wheat Field with Cypresses",
        "primaryImage":"https://images.metmuseum.org/CRDImages/ep/original/DT1567.jpg",
        "primaryImageSmall":"https://images.metmuseum.org/CRDImages/ep/web-large/DT1567.jpg",
        "additionalImages":["https://images.metmuseum.org/CRDImages/ep/original/A.jpg",
        "javascript:alert(1)","https://images.metmuseum.org/CRDImages/ep/original/DT1567.jpg",
        "https://images.metmuseum.org/CRDImages/ep/original/B.PNG"],
        "artistDisplayName":"Vincent van Gogh","artistDisplayBio":"Dutch, 1853–1890","objectDate":"1889",
        "medium":"Oil on canvas","dimensions":"73.2 × 93.4 cm","creditLine":"Purchase, 1993",
        "objectURL":"https://www.metmuseum.org/art/collection/search/436535","department":"European Paintings",
        "measurements":[{"elementName":"Framed","elementMeasurements":{"Height":100,"Width":100}},
        {"elementName":"Overall","elementMeasurements":{"Height":73.2,"Width":93.4}}]}
        """#

    private static func upstream() -> FakeUpstream {
        let upstream = FakeUpstream()
        upstream.answer(.object(id: 436_535), with: .json(record))
        upstream.answer(.object(id: 1), with: .json(#"{"objectID":1,"isPublicDomain":false,"primaryImage":""}"#))
        upstream.answer(.object(id: 2), with: .json(#"{"objectID":2,"isPublicDomain":true,"primaryImage":""}"#))
        upstream.answer(.object(id: 3), with: .notFound())
        return upstream
    }

    private func manifest(_ harness: Harness, host: String = "127.0.0.1:8080") async throws -> [String: Any] {
        let response = await harness.get("/iiif/436535/manifest.json", headers: ["Host": host])
        #expect(response.status == 200, "\(response.text)")
        #expect(response.headers["Content-Type"] == IIIFManifest.contentType)
        return try response.jsonObject()
    }

    @Test func aPublicDomainObjectHasOneCanvasPerImageWithItsAspectRatio() async throws {
        let harness = Harness(upstream: Self.upstream())
        let manifest = try await manifest(harness)
        #expect(manifest["@context"] as? String == "http://iiif.io/api/presentation/3/context.json")
        #expect(manifest["id"] as? String == "http://127.0.0.1:8080/iiif/436535/manifest.json")
        #expect(manifest["type"] as? String == "Manifest")
        #expect((manifest["label"] as? [String: [String]])?["en"] == ["Wheat Field with Cypresses"])
        #expect(manifest["rights"] as? String == "http://creativecommons.org/publicdomain/zero/1.0/")
        let canvases = try #require(manifest["items"] as? [[String: Any]])
        let painted = canvases.compactMap { canvas -> String? in
            let pages = canvas["items"] as? [[String: Any]]
            let annotation = (pages?.first?["items"] as? [[String: Any]])?.first
            #expect(annotation?["motivation"] as? String == "painting")
            #expect(annotation?["target"] as? String == canvas["id"] as? String)
            return (annotation?["body"] as? [String: Any])?["id"] as? String
        }
        // The primary image, then the additional ones: each once, and nothing that is not an image URL on the Met's host.
        #expect(
            painted == [
                "https://images.metmuseum.org/CRDImages/ep/original/DT1567.jpg",
                "https://images.metmuseum.org/CRDImages/ep/original/A.jpg",
                "https://images.metmuseum.org/CRDImages/ep/original/B.PNG",
            ])
        // The Overall measurement's 93.4 × 73.2 cm, on a 4,000-unit side.
        #expect(canvases.allSatisfy { $0["width"] as? Int == 4_000 && $0["height"] as? Int == 3_135 })
        let metadata = try #require(manifest["metadata"] as? [[String: [String: [String]]]])
        let artist = metadata.first { $0["label"]?["en"] == ["Artist"] }
        #expect(artist?["value"]?["en"] == ["Vincent van Gogh (Dutch, 1853–1890)"])
        #expect(
            (manifest["homepage"] as? [[String: Any]])?.first?["id"] as? String
                == "https://www.metmuseum.org/art/collection/search/436535")
        #expect(manifest["behavior"] as? [String] == ["individuals"])
        let bodies = canvases.compactMap { canvas in
            (((canvas["items"] as? [[String: Any]])?.first?["items"] as? [[String: Any]])?.first?["body"]
                as? [String: Any])?["format"] as? String
        }
        #expect(bodies == ["image/jpeg", "image/jpeg", "image/png"])
    }

    @Test func theIDsStartWithThePublicURLWhenOneIsSet() async throws {
        let harness = Harness(upstream: Self.upstream()) { $0.presentation.publicURL = "https://met.example" }
        let manifest = try await manifest(harness, host: "evil.example")
        #expect(manifest["id"] as? String == "https://met.example/iiif/436535/manifest.json")
    }

    @Test(arguments: [
        ("met.local:9090", "http://met.local:9090"),
        ("[::1]:8080", "http://[::1]:8080"),
        ("a\"b", "http://localhost"),
        ("host/<script>", "http://localhost"),
        ("", "http://localhost"),
    ])
    func theHostIsUsedOnlyWhenItIsAPlainAuthority(host: String, base: String) async throws {
        #expect(ManifestPipeline.base(publicURL: nil, scheme: "http", host: host) == base)
    }

    @Test func aManifestIsRenderedOncePerRecordAndRevalidates() async throws {
        let harness = Harness(upstream: Self.upstream())
        let first = await harness.get("/iiif/436535/manifest.json", headers: ["Host": "a:1"])
        let again = try #require(harness.getImmediately("/iiif/436535/manifest.json", headers: ["Host": "a:1"]))
        #expect(again.body == first.body)
        let etag = try #require(again.headers["ETag"])
        #expect(again.headers["Cache-Control"]?.hasPrefix("max-age=") == true)
        let revalidated = harness.getImmediately(
            "/iiif/436535/manifest.json", headers: ["Host": "a:1", "If-None-Match": etag])
        #expect(revalidated?.status == 304)
        // Another base is another body.
        let other = try #require(harness.getImmediately("/iiif/436535/manifest.json", headers: ["Host": "b:2"]))
        #expect(other.headers["ETag"] != etag)
        #expect(harness.upstream.calls.count == 1)
    }

    @Test(arguments: [
        (1, 404, "not_public_domain"),
        (2, 404, "no_images"),
        (3, 404, "object_not_found"),
    ])
    func objectsWithoutPublicImagesAreA404SayingWhy(id: Int, status: Int, code: String) async throws {
        let harness = Harness(upstream: Self.upstream())
        let response = await harness.get("/iiif/\(id)/manifest.json")
        #expect(response.status == status)
        #expect(response.problemCode == code)
    }

    @Test(arguments: [
        "/iiif/abc/manifest.json", "/iiif/0/manifest.json", "/iiif/436535/manifest.json?x=1",
    ])
    func malformedRequestsAreA400(target: String) async throws {
        let response = try #require(Harness().getImmediately(target))
        #expect(response.status == 400)
    }

    @Test(arguments: ["/iiif/436535/manifest.jsonx", "/iiif//manifest.json", "/iiif/1/2/manifest.json", "/iiif/1"])
    func otherPathsAreNoRoute(target: String) async throws {
        let response = try #require(Harness().getImmediately(target))
        #expect(response.problemCode == "route_not_found")
    }

    @Test func aRecordWithoutMeasurementsHasSquareCanvases() {
        let record = IIIFRecord.read(Array(#"{"objectID":5,"primaryImage":"https://images.metmuseum.org/x.jpg"}"#.utf8))
        let manifest = IIIFManifest(record: record, id: 5, base: "http://h")
        #expect(manifest.canvasSize == (4_000, 4_000))
        #expect(manifest.images == ["https://images.metmuseum.org/x.jpg"])
        let portrait = IIIFRecord.read(
            Array(#"{"measurements":[{"elementName":"Sheet","elementMeasurements":{"Height":40,"Width":30}}]}"#.utf8))
        #expect(IIIFManifest(record: portrait, id: 5, base: "http://h").canvasSize == (3_000, 4_000))
        // Members of unexpected types are absent, not a failure.
        let odd = IIIFRecord.read(Array(#"{"title":5,"measurements":"n/a","additionalImages":null}"#.utf8))
        #expect(odd.title == nil && odd.aspectRatio == nil && odd.additionalImages == nil)
    }
}
