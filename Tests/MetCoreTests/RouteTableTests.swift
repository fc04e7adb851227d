import Testing

@testable import MetCore
@testable import MetEngine

@Suite("The route table: one entry per route")
struct RouteTableTests {
    /// Every entry's paths, methods, label and dialect, as a literal: any change to the table
    /// shows here, and in `openapi.yaml` it must show too.
    @Test func theTableIsAsDeclared() {
        let rows = RouteTable.entries.map { entry -> String in
            let paths: String
            switch entry.paths {
            case .exact(let list): paths = list.joined(separator: " ")
            case .segment(let prefix, let suffix): paths = prefix + "{}" + suffix
            case .rest(let prefix): paths = prefix + "{…}"
            }
            return "\(paths) | \(entry.methods.allowed) | \(entry.label.name)\(entry.metDialect ? " | met" : "")"
        }
        #expect(
            rows == [
                "/objects/{} | GET, HEAD, OPTIONS | object",
                "/objects | GET, HEAD, OPTIONS | objects",
                "/departments | GET, HEAD, OPTIONS | departments",
                "/search | GET, HEAD, OPTIONS | search",
                "/widget/timeline | GET, HEAD, OPTIONS | widget",
                "/open/{} | GET, HEAD, OPTIONS | open",
                "/open | GET, HEAD, OPTIONS | open",
                "/random | GET, HEAD, OPTIONS | random",
                "/iiif/{}/manifest.json | GET, HEAD, OPTIONS | iiif",
                "/iiif/{…} | GET, HEAD, OPTIONS | iiif_image",
                "/images/{…} | GET, HEAD, OPTIONS | images",
                "/ /explorer.js /explorer.css /favicon.svg | GET, HEAD, OPTIONS | explorer",
                "/public/collection/v1/objects/{} | GET, HEAD, OPTIONS | mirror | met",
                "/public/collection/v1/objects | GET, HEAD, OPTIONS | mirror | met",
                "/public/collection/v1/departments | GET, HEAD, OPTIONS | mirror | met",
                "/public/collection/v1/search | GET, HEAD, OPTIONS | mirror | met",
                "/public/collection/v1.1/search | GET, HEAD, OPTIONS | mirror | met",
                "/changes | GET, HEAD, OPTIONS | changes",
                "/cache/objects/{} | DELETE, OPTIONS | purge",
                "/cache/search | DELETE, OPTIONS | purge",
                "/cache/snapshot | GET, HEAD, OPTIONS | snapshot",
                "/health | GET, HEAD, OPTIONS | health",
                "/metrics | GET, HEAD, OPTIONS | metrics",
                "/openapi.yaml | GET, HEAD, OPTIONS | openapi",
            ])
    }

    /// Paths and what they match: the label and the segment, or nothing.
    @Test(
        arguments: [
            ("/objects/436535", "object", "436535"), ("/objects/x", "object", "x"), ("/objects/é", "object", "é"),
            ("/objects", "objects", ""),
            ("/objects/", nil, nil), ("/objects/1/", nil, nil), ("/objects/1/2", nil, nil),
            ("/iiif/7/manifest.json", "iiif", "7"),
            // The rest of /iiif/ is the Image API's, whose parser refuses what is not its shape.
            ("/iiif//manifest.json", "iiif_image", "/manifest.json"),
            ("/iiif/manifest.json", "iiif_image", "manifest.json"),
            ("/iiif/7/8/manifest.json", "iiif_image", "7/8/manifest.json"),
            ("/iiif/7/manifest.jsonx", "iiif_image", "7/manifest.jsonx"),
            ("/iiif/7/0/info.json", "iiif_image", "7/0/info.json"),
            ("/iiif/", nil, nil),
            ("/open/1", "open", "1"), ("/open", "open", ""), ("/open/", nil, nil),
            ("/public/collection/v1/objects/01", "mirror", "01"), ("/cache/objects/5", "purge", "5"),
            ("/", "explorer", ""), ("/health/", nil, nil), ("", nil, nil), ("/HEALTH", nil, nil),
            ("/images/CRDImages/ep/web-large/DT1567.jpg", "images", "CRDImages/ep/web-large/DT1567.jpg"),
            ("/images/x", "images", "x"), ("/images/", nil, nil), ("/images", nil, nil),
        ] as [(String, String?, String?)])
    func aPathMatchesOneRouteOrNone(path: String, label: String?, segment: String?) {
        let match = RouteTable(limits: RequestLimits()).match(path)
        #expect(match.map { RouteTable.entries[$0.entry].label.name } == label)
        #expect(match?.segment == segment)
    }
}
