import Foundation
import MetEngine
import Testing

@testable import MetHTTP

@Suite("The HTTP layer's problem codes: status and title pinned")
struct HTTPProblemCodeTests {
    /// As in the core's ProblemCodeTests: literals, so that a changed status, a reworded title or a
    /// code added without a row fails.
    typealias Row = (code: String, status: Int, title: String)

    static let rows: [Row] = [
        ("malformed_request", 400, "Malformed HTTP request"),
        ("request_timeout", 408, "Request not received in time"),
        ("transfer_coding_not_supported", 501, "Transfer coding not supported"),
        ("http_version_not_supported", 505, "HTTP version not supported"),
    ]

    @Test(arguments: rows)
    func eachCodeRendersItsStatusTitleAndType(row: Row) throws {
        let code = try #require(HTTPProblemCode(rawValue: row.code), "no HTTP problem code \(row.code)")
        let response = Problem(code, "Detail with \"quotes\".").response
        #expect(response.status == row.status)
        #expect(response.headers["Content-Type"] == "application/problem+json")
        #expect(response.headers["Cache-Control"] == "no-store")
        let document = try #require(try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any])
        #expect(Set(document.keys) == ["type", "title", "status", "detail", "code"])
        #expect(document["code"] as? String == row.code)
        #expect(document["status"] as? Int == row.status)
        #expect(document["title"] as? String == row.title)
        #expect(document["type"] as? String == "urn:themet:problem:\(row.code)")
        #expect(document["detail"] as? String == "Detail with \"quotes\".")
    }

    @Test func theTableHasEveryCodeOnceAndNoneIsAlsoTheCores() {
        let listed = Self.rows.map(\.code)
        #expect(Set(HTTPProblemCode.allCases.map(\.rawValue)) == Set(listed))
        #expect(listed.allSatisfy { ProblemCode(rawValue: $0) == nil })
    }
}
