import Foundation
import Testing

@testable import MetCore
@testable import MetEngine

@Suite("JSONPretty: the terminal's JSON")
struct JSONPrettyTests {
    private func pretty(_ text: String) -> String? {
        JSONPretty.format(Array(text.utf8)).map { String(decoding: $0, as: UTF8.self) }
    }

    @Test func membersKeepTheirOrderAndEmptyContainersStayOnOneLine() {
        let text = #"{"query":{"q":"a"},"total":2,"objects":[{"objectID":1,"tags":null}],"missing":[],"x":{}}"#
        #expect(
            pretty(text) == """
                {
                  "query": {
                    "q": "a"
                  },
                  "total": 2,
                  "objects": [
                    {
                      "objectID": 1,
                      "tags": null
                    }
                  ],
                  "missing": [],
                  "x": {}
                }
                """)
    }

    @Test func slashesAreUnescapedAndOtherEscapesKept() throws {
        let text = #"{"url":"https:\/\/images.metmuseum.org\/a.jpg","q":"say \"hi\" [{,:}]\\\n"}"#
        let formatted = try #require(pretty(text))
        #expect(formatted.contains(#""url": "https://images.metmuseum.org/a.jpg""#))
        #expect(formatted.contains(#""q": "say \"hi\" [{,:}]\\\n""#))
        // The same document: Foundation reads both to equal values.
        let before = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? NSDictionary
        let after = try JSONSerialization.jsonObject(with: Data(formatted.utf8)) as? NSDictionary
        #expect(before == after)
    }

    @Test func whatIsAlreadyIndentedComesOutTheSame() throws {
        let record = try Data(
            contentsOf: URL(fileURLWithPath: Repository.fixtures + "/public/collection/v1/objects/436535.json"))
        let once = try #require(JSONPretty.format([UInt8](record)))
        #expect(JSONPretty.format(once) == once)
        let keys = { (bytes: [UInt8]) in
            String(decoding: bytes, as: UTF8.self).split(separator: "\n").filter { $0.hasPrefix("  \"") }
                .map { $0.split(separator: ":").first! }
        }
        #expect(keys(once) == keys([UInt8](record)).map { $0 })
    }

    @Test(arguments: ["", "{", "[1,2", #"{"a":"b}"#, "}", "[]]"])
    func unbalancedInputIsNil(text: String) {
        #expect(pretty(text) == nil)
    }

    @Test(arguments: ["1", "true", #""s""#, "[]", "{}", "null"])
    func aScalarOrAnEmptyContainerIsItself(text: String) {
        #expect(pretty(text) == text)
    }
}
