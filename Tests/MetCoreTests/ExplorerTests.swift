import Foundation
import Testing

@testable import MetCore
@testable import MetEngine

@Suite("GET /: the explorer's files")
struct ExplorerTests {
    @Test(arguments: ExplorerAsset.allCases)
    func eachFileIsServedWithItsTypeAndThePolicy(asset: ExplorerAsset) throws {
        let harness = Harness()
        let response = try #require(harness.getImmediately(asset.path))
        #expect(response.status == 200)
        #expect(response.headers["Content-Type"] == asset.contentType)
        #expect(response.headers["Content-Security-Policy"] == ExplorerHandler.contentSecurityPolicy)
        #expect(response.headers["X-Content-Type-Options"] == "nosniff")
        #expect(response.headers["Cache-Control"] == "no-cache")
        #expect(response.body == asset.bytes)
        #expect(!response.body.isEmpty)
        let etag = try #require(response.headers["ETag"])
        #expect(harness.getImmediately(asset.path, headers: ["If-None-Match": etag])?.status == 304)
    }

    @Test func thePolicyAllowsOnlyThisServer() {
        let policy = ExplorerHandler.contentSecurityPolicy
        #expect(policy.contains("default-src 'none'"))
        #expect(policy.contains("script-src 'self';"))
        #expect(policy.contains("img-src 'self';"))
        #expect(!policy.contains("unsafe"))
        #expect(!policy.contains("metmuseum"), "pictures come through this server")
    }

    /// The page loads nothing from another site: every absolute URL in its files is the Met's
    /// web site (a link out) or a namespace name, and the page's own files are named by path.
    @Test func theFilesNameNoOtherSite() throws {
        let allowed = ["https://www.metmuseum.org/", "http://www.w3.org/2000/svg"]
        let pattern = try Regex(#"https?://[^\s"'`)<>\\]*"#)
        for asset in ExplorerAsset.allCases {
            let text = String(decoding: asset.bytes, as: UTF8.self)
            for match in text.matches(of: pattern) {
                let url = String(text[match.range])
                #expect(allowed.contains { url.hasPrefix($0) }, "\(asset.path) names \(url)")
            }
        }
        let page = String(decoding: ExplorerAsset.page.bytes, as: UTF8.self)
        #expect(page.contains(#"<script type="module" src="/explorer.js"></script>"#))
        #expect(page.contains(#"<link rel="stylesheet" href="/explorer.css">"#))
        #expect(!page.contains("<script>"), "no inline script: the policy would refuse it")
        #expect(!page.contains("style="), "no inline style: the policy would refuse it")
    }

    @Test func theFilesAreCompressedForClientsThatAcceptGzip() throws {
        // A stand-in for gzip that shrinks anything to its first 16 bytes.
        let harness = Harness(upstream: FakeUpstream(), compressingWith: { Array($0.prefix(16)) })
        let response = try #require(harness.getImmediately("/explorer.js", headers: ["Accept-Encoding": "gzip"]))
        #expect(response.headers["Content-Encoding"] == "gzip")
        #expect(response.body == Array(ExplorerAsset.script.bytes.prefix(16)))
        #expect(response.headers["Vary"] == "Accept-Encoding")
    }

    /// Shared links get tracking parameters added; the page is the same with or without them.
    @Test(arguments: ["/?utm_source=newsletter&fbclid=x", "/explorer.js?v=2"])
    func aQueryIsIgnored(target: String) throws {
        let response = try #require(Harness().getImmediately(target))
        #expect(response.status == 200)
        let path = String(target.prefix { $0 != "?" })
        #expect(response.body == ExplorerAsset(rawValue: path)?.bytes)
    }

    @Test func otherMethodsAreA405() throws {
        let response = try #require(Harness().service.readyResponse(to: Request(method: "POST", target: "/")))
        #expect(response.status == 405)
        #expect(response.headers["Allow"] == "GET, HEAD, OPTIONS")
    }
}
