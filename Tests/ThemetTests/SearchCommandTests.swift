import Foundation
import Testing

@testable import MetCore
@testable import MetEngine
@testable import themet

@Suite("themet search: the command line")
struct SearchCommandTests {
    @Test func theQueryAndFiltersBecomeTheTargetAndTheRestGoesToTheServer() throws {
        let parsed = try SearchCommand.parse([
            "cypress", "--limit", "3", "--upstream", "Fixtures", "--departmentId=11", "--data-dir", "state",
            "--hasImages", "false",
        ])
        #expect(parsed.target == "/search?q=cypress&limit=3&departmentId=11&hasImages=false&wait=30000")
        #expect(parsed.server == ["--upstream", "Fixtures", "--data-dir", "state"])
    }

    @Test func theTargetIsAValidSearchWithTheLongestWaitByDefault() throws {
        let parsed = try SearchCommand.parse(["van gogh", "--medium", "Paintings|Oil on canvas"])
        #expect(parsed.server.isEmpty)
        let query = try SearchQuery(try RequestTarget(parsing: parsed.target))
        #expect(query.q == "van gogh")
        #expect(query.filters.contains(.init(name: "medium", value: "Paintings|Oil on canvas")))
        #expect(query.wait == Double(SearchQuery.maxWaitMilliseconds) / 1_000)
        #expect(query.limit == SearchQuery.defaultLimit)
    }

    @Test func aWaitGivenIsKept() throws {
        let parsed = try SearchCommand.parse(["--wait", "100", "cypress"])
        #expect(parsed.target == "/search?q=cypress&wait=100")
    }

    @Test(arguments: [
        ([], "QUERY"),
        (["--limit", "3"], "QUERY"),
        (["cypress", "--limit"], "--limit"),
        (["cypress", "wheat"], "wheat"),
    ])
    func badArgumentsNameTheirFlag(arguments: [String], flag: String) {
        #expect(throws: ConfigurationError.self) { try SearchCommand.parse(arguments) }
        do {
            _ = try SearchCommand.parse(arguments)
        } catch {
            #expect(error.flag == flag)
        }
    }

    @Test func aBadFilterValueIsTheServicesProblem() throws {
        let parsed = try SearchCommand.parse(["cypress", "--limit", "1000"])
        #expect(parsed.target == "/search?q=cypress&limit=1000&wait=30000")
        let problem = #expect(throws: Problem.self) { try SearchQuery(try RequestTarget(parsing: parsed.target)) }
        #expect(problem?.parameter == "limit")
    }
}

@Suite("themet's arguments: --, standalone flags")
struct RouteArgumentTests {
    @Test(arguments: [
        (["cypress", "--hasImages", "--limit", "5"], ["hasImages=true", "limit=5"], ["cypress"]),
        (["--hasImages", "false", "cypress"], ["hasImages=false"], ["cypress"]),
        (["--hasImages", "FALSE", "cypress"], ["hasImages=FALSE"], ["cypress"]),
        (["cypress", "--isHighlight"], ["isHighlight=true"], ["cypress"]),
        (["--isHighlight", "cypress"], ["isHighlight=true"], ["cypress"]),
        (["--store=false", "--limit=2", "a"], ["store=false", "limit=2"], ["a"]),
        (["--limit", "5", "--", "--hasImages", "-x"], ["limit=5"], ["--hasImages", "-x"]),
    ])
    func flagsAndArguments(arguments: [String], items: [String], positional: [String]) throws {
        let split = try RouteArguments.split(arguments, known: SearchQuery.parameters)
        #expect(split.items.map { "\($0.name)=\($0.value)" } == items)
        #expect(split.positional == positional)
        #expect(split.server.isEmpty)
    }

    @Test func aFlagThatIsNotBooleanStillNeedsItsValue() {
        #expect(throws: ConfigurationError(flag: "--limit", reason: "needs a value")) {
            try RouteArguments.split(["a", "--limit"], known: SearchQuery.parameters)
        }
    }

    @Test func aQueryAfterDoubleDashMayLookLikeAFlag() throws {
        let parsed = try SearchCommand.parse(["--limit", "1", "--", "--help"])
        #expect(parsed.target.hasPrefix("/search?q=--help&limit=1"))
    }
}
