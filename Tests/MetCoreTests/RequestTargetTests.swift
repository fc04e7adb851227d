import Testing

@testable import MetCore
@testable import MetEngine

@Suite("Request target parsing")
struct RequestTargetTests {
    typealias Item = RequestTarget.QueryItem

    @Test func splitsPathAndQueryInOrder() throws {
        let target = try RequestTarget(parsing: "/objects/436535?fields=title,objectID&x=1&x=2")
        #expect(target.path == "/objects/436535")
        #expect(
            target.query == [
                Item(name: "fields", value: "title,objectID"), Item(name: "x", value: "1"),
                Item(name: "x", value: "2"),
            ])
        #expect(target.value(of: "x") == "2")
        #expect(target.value(of: "missing") == nil)
    }

    @Test(arguments: [
        ("/a%20b", "/a b"),
        ("/a+b", "/a+b"),
        ("/caf%C3%A9", "/café"),
        ("/%E2%82%AC", "/€"),
        ("/objects/%31", "/objects/1"),
        ("/objects/%2B1", "/objects/+1"),
        ("/x%2Fy", "/x/y"),
        ("/", "/"),
    ])
    func pathsArePercentDecodedWithPlusKept(raw: String, path: String) throws {
        #expect(try RequestTarget(parsing: raw).path == path)
    }

    @Test(arguments: [
        ("q=a+b", Item(name: "q", value: "a b")),
        ("q=a%2Bb", Item(name: "q", value: "a+b")),
        ("q=a%20b", Item(name: "q", value: "a b")),
        ("departmentIds=1%7C3", Item(name: "departmentIds", value: "1|3")),
        ("a%5Bb%5D=%C3%A9", Item(name: "a[b]", value: "é")),
        ("flag", Item(name: "flag", value: "")),
        ("empty=", Item(name: "empty", value: "")),
        ("eq=a=b", Item(name: "eq", value: "a=b")),
        ("q=x#fragment", Item(name: "q", value: "x")),
    ])
    func queryItemsArePercentDecodedWithPlusAsSpace(query: String, item: Item) throws {
        #expect(try RequestTarget(parsing: "/p?" + query).query == [item])
    }

    @Test func emptyPairsAreSkippedAndANameMayBeEmpty() throws {
        let target = try RequestTarget(parsing: "/p?&a=1&&=2&b&#c=3")
        #expect(target.query == [Item(name: "a", value: "1"), Item(name: "", value: "2"), Item(name: "b", value: "")])
    }

    @Test(arguments: ["/p?", "/p?&&", "/p?#x"])
    func emptyQueriesHaveNoItems(raw: String) throws {
        let target = try RequestTarget(parsing: raw)
        #expect(target.path == "/p")
        #expect(target.query.isEmpty)
    }

    @Test(arguments: [
        "/%", "/%2", "/%zz", "/%G1", "/a%2", "/%FF", "/%C3", "/%C0%AF",
        "/p?q=%", "/p?q=%4", "/p?%zz=1", "/p?q=%FF%FE",
    ])
    func malformedEscapesAreInvalidRequestTargets(raw: String) {
        let problem = #expect(throws: Problem.self) { try RequestTarget(parsing: raw) }
        #expect(problem?.code == "invalid_request_target")
        #expect(problem?.status == 400)
    }

    @Test(arguments: ["", "*", "objects/1", "http://example.org/objects/1", "?q=1"])
    func targetsThatAreNotOriginFormAreRejected(raw: String) {
        let problem = #expect(throws: Problem.self) { try RequestTarget(parsing: raw) }
        #expect(problem?.code == "invalid_request_target")
    }
}

@Suite("Request targets split on bytes")
struct RequestTargetByteSplitTests {
    /// U+0301 (combining acute) after a separator makes one Character with it; the split must
    /// still happen there.
    @Test func aCombiningMarkAfterASeparatorDoesNotHideIt() throws {
        let target = try RequestTarget(parsing: "/p?a=1&\u{301}b=2&c=\u{301}")
        #expect(
            target.query == [
                .init(name: "a", value: "1"), .init(name: "\u{301}b", value: "2"),
                .init(name: "c", value: "\u{301}"),
            ])
        #expect(try RequestTarget(parsing: "/p?\u{301}q=x").query == [.init(name: "\u{301}q", value: "x")])
    }
}
