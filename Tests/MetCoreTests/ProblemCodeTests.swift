import Testing

@testable import MetCore
@testable import MetEngine

@Suite("Problem codes: status and title pinned")
struct ProblemCodeTests {
    /// What clients may rely on for a problem code: its status and title, written out as literals
    /// so that a changed status, a reworded title or a code added without a row fails.
    typealias Row = (code: String, status: Int, title: String)

    /// Every code of the core's (the HTTP layer's own are pinned in MetHTTPTests).
    static let rows: [Row] = [
        ("invalid_request_target", 400, "Invalid request target"),
        ("unknown_parameter", 400, "Unknown query parameter"),
        ("invalid_parameter", 400, "Invalid query parameter"),
        ("invalid_object_id", 400, "Invalid object ID"),
        ("invalid_image_path", 400, "Invalid image path"),
        ("invalid_iiif_request", 400, "Invalid IIIF image request"),
        ("forbidden", 403, "Forbidden"),
        ("route_not_found", 404, "No such route"),
        ("object_not_found", 404, "Object not found"),
        ("no_match", 404, "No object matches"),
        ("not_public_domain", 404, "Not in the public domain"),
        ("no_images", 404, "No images"),
        ("image_not_found", 404, "Image not found"),
        ("no_persistent_cache", 404, "No persistent cache"),
        ("method_not_allowed", 405, "Method not allowed"),
        ("cursor_expired", 410, "Change cursor expired"),
        ("body_too_large", 413, "Request body too large"),
        ("uri_too_long", 414, "Request target too long"),
        ("range_not_satisfiable", 416, "Range not satisfiable"),
        ("headers_too_large", 431, "Request header fields too large"),
        ("internal_error", 500, "Internal server error"),
        ("upstream_unreachable", 502, "Upstream unreachable"),
        ("upstream_error", 502, "Upstream error"),
        ("upstream_malformed", 502, "Upstream sent a malformed response"),
        ("upstream_unavailable", 503, "Upstream unavailable"),
        ("upstream_blocked", 503, "Upstream is blocking requests"),
        ("upstream_timeout", 504, "Upstream timed out"),
        ("shutting_down", 503, "Server shutting down"),
        ("too_many_requests", 429, "Too many requests waiting for the Met"),
        ("iiif_feature_not_supported", 501, "IIIF feature not supported"),
        ("image_not_derivable", 502, "Image could not be derived"),
    ]

    @Test(arguments: rows)
    func eachCodeKeepsItsStatusAndTitle(row: Row) throws {
        let code = try #require(ProblemCode(rawValue: row.code), "no problem code \(row.code)")
        #expect(code.status == row.status)
        #expect(code.title == row.title)
    }

    @Test func theTableHasEveryCodeOnce() {
        let listed = Self.rows.map(\.code)
        #expect(Set(listed).count == listed.count, "a code is listed twice")
        #expect(Set(ProblemCode.allCases.map(\.rawValue)) == Set(listed))
    }
}
