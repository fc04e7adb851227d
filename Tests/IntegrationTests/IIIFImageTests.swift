import Foundation
import ImageHeaders
import TestKit
import Testing

/// `/iiif/{id}/{n}/…` end to end: `themet` fetching the record and the original with its real
/// curl client from `met-fixture-server` over loopback, and deriving with libvips.
@Suite("The IIIF Image API end to end, through the curl client")
struct IIIFImageTests {
    static let original = "/CRDImages/ep/original/DT1567.jpg"
    /// As `ImageTierTests.patient`: a debug fake makes a 4,000 px original in seconds.
    static let patient = ["--upstream-connect-timeout", "30s", "--upstream-timeout", "60s"]

    @Test func infoAndDerivativesOfOneOriginalCostTheImageHostOneRequest() async throws {
        let servers = try await Servers.start(themet: Self.patient)
        let info = try await servers.get("/iiif/436535/0/info.json")
        #expect(info.status == 200 && info.header("Content-Type") == "application/json")
        let document = try #require(try JSONSerialization.jsonObject(with: info.body) as? [String: Any])
        #expect(document["profile"] as? String == "level2" && document["type"] as? String == "ImageService3")
        let (width, height) = (try #require(document["width"] as? Int), try #require(document["height"] as? Int))
        #expect(max(width, height) == 4_000)

        let thumbnail = try await servers.get("/iiif/436535/0/full/!400,400/0/default.jpg")
        #expect(thumbnail.status == 200 && thumbnail.header("Content-Type") == "image/jpeg")
        let thumbnailHeader = try ImageHeader.read([UInt8](thumbnail.body)).get()
        #expect(thumbnailHeader.format == .jpeg && max(thumbnailHeader.width, thumbnailHeader.height) == 400)
        let tile = try await servers.get("/iiif/436535/0/512,512,512,512/256,/90/gray.png")
        #expect(try ImageHeader.read([UInt8](tile.body)).get() == ImageHeader(format: .png, width: 256, height: 256))
        let again = try await servers.get("/iiif/436535/0/512,512,512,512/256,256/90/gray.png")
        #expect(again.body == tile.body && again.header("ETag") == tile.header("ETag"))
        #expect(again.header("Cache-Status")?.hasPrefix("TheMet; hit") == true)

        // The base URI redirects (URLSession would follow it: one raw exchange instead).
        let request = "GET /iiif/436535/0 HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
        let redirect = try await RawHTTP.exchange(port: servers.themet.port, request: Array(request.utf8)).text
        #expect(redirect.hasPrefix("HTTP/1.1 303 "))
        #expect(redirect.contains("\r\nLocation: http://127.0.0.1/iiif/436535/0/info.json\r\n"))
        #expect(try await servers.upstreamStats().paths[Self.original] == 1)
    }

    /// A tile made before is one shared answer a second, but each host is named in its own: the
    /// canonical `Link` holds the host the request was sent to.
    @Test func repeatedTileHitsNameEachRequestsHostInTheirLink() async throws {
        let servers = try await Servers.start(themet: Self.patient)
        let tile = "/iiif/436535/0/0,0,512,512/256,/0/default.jpg"
        #expect(try await servers.get(tile).status == 200)
        func exchange(host: String) async throws -> RawHTTP.Exchange {
            let request = "GET \(tile) HTTP/1.1\r\nHost: \(host)\r\nConnection: close\r\n\r\n"
            return try await RawHTTP.exchange(port: servers.themet.port, request: Array(request.utf8))
        }
        let link = "/iiif/436535/0/0,0,512,512/256,256/0/default.jpg>;rel=\"canonical\""
        var bodies: [[UInt8]] = []
        for host in ["a.example", "b.example", "a.example", "b.example:8080"] {
            let answer = try await exchange(host: host)
            #expect(answer.text.hasPrefix("HTTP/1.1 200 "))
            #expect(answer.text.contains("\r\nLink: <http://\(host)\(link)"), "\(answer.text.prefix(600))")
            #expect(answer.text.contains("Cache-Status: TheMet; hit"))
            bodies.append(try answer.body())
        }
        #expect(Set(bodies).count == 1)
        #expect(try await servers.upstreamStats().paths[Self.original] == 1)
    }

    @Test(arguments: [
        ("/iiif/436535/0/full/max/45/default.jpg", 501, "iiif_feature_not_supported"),
        ("/iiif/436535/0/full/4001,/0/default.jpg", 400, "invalid_iiif_request"),
        ("/iiif/436535/0/square/max/0/native.jpg", 400, "invalid_iiif_request"),
        ("/iiif/436535/99/info.json", 404, "image_not_found"),
        ("/iiif/436535/0/info.xml", 404, "route_not_found"),
        // Hostile: a query, encoded slashes and dot segments, a number past Int32, bytes in the path.
        ("/iiif/436535/0/info.json?callback=x", 400, "unknown_parameter"),
        ("/iiif/436535%2F..%2F0/info.json", 404, "route_not_found"),
        ("/iiif/436535/0/..%2F..%2Fetc/max/0/default.jpg", 404, "route_not_found"),
        ("/iiif/99999999999999999999/0/info.json", 404, "image_not_found"),
        ("/iiif/436535/0/full/max/0/default.jpg%00.png", 400, "invalid_iiif_request"),
        ("/iiif/436535/0/pct:1e308,0,1,1/max/0/default.jpg", 400, "invalid_iiif_request"),
        ("/iiif/436535/0/full/%5E%5Emax/0/default.jpg", 400, "invalid_iiif_request"),
        ("/iiif/436535/0/full/%CC%81max/0/default.jpg", 400, "invalid_iiif_request"),
        ("/iiif/436535/0/full/max/0/default.j%C3%A9g", 400, "invalid_iiif_request"),
    ])
    func refusalsAreProblemDocuments(target: String, status: Int, code: String) async throws {
        let servers = try await Servers.start(themet: Self.patient)
        let response = try await servers.get(target)
        #expect(response.status == status)
        #expect(response.header("Content-Type") == "application/problem+json")
        #expect(String(decoding: response.body, as: UTF8.self).contains(#""code":"\#(code)""#))
    }
}
