import Testing

@testable import MetCore
@testable import MetEngine
@testable import themet

@Suite("themet timeline: the command line")
struct TimelineCommandTests {
    @Test(arguments: [
        ([], "/widget/timeline", []),
        (
            ["--family", "large", "--upstream", "Fixtures", "--data-dir=state"], "/widget/timeline?family=large",
            ["--upstream", "Fixtures", "--data-dir", "state"]
        ),
        (
            ["--q", "van gogh", "--limit=5", "--start", "2026-11-29T18:00:00Z", "--interval", "60"],
            "/widget/timeline?q=van%20gogh&limit=5&start=2026-11-29T18%3A00%3A00Z&interval=60&wait=30000", []
        ),
        (["--q", "cypress", "--wait", "100"], "/widget/timeline?q=cypress&wait=100", []),
    ])
    func ownFlagsBecomeTheTargetAndTheRestGoesToTheServer(arguments: [String], target: String, server: [String])
        throws
    {
        let parsed = try TimelineCommand.parse(arguments)
        #expect(parsed.target == target)
        #expect(parsed.server == server)
        #expect(RouteCommands.named("timeline").map(ObjectIdentifier.init) == ObjectIdentifier(TimelineCommand.self))
    }

    @Test func theTargetIsAValidTimelineRequest() throws {
        let parsed = try TimelineCommand.parse([
            "--q", "van gogh", "--family", "large", "--start", "2026-11-29T18:00:00Z",
        ])
        let request = try WidgetRequest(try RequestTarget(parsing: parsed.target))
        #expect(request.family == .large)
        #expect(request.start == 1_795_975_200)
        #expect(request.search?.q == "van gogh")
        // With q, a terminal waits as long as the route allows for the paced upstream, as `themet search` does.
        #expect(request.search?.wait == Double(SearchQuery.maxWaitMilliseconds) / 1_000)
    }

    @Test(arguments: [(["extra"], "extra"), (["--family"], "--family"), (["--family", "large", "more"], "more")])
    func badArgumentsNameTheirFlag(arguments: [String], flag: String) {
        let error = #expect(throws: ConfigurationError.self) { try TimelineCommand.parse(arguments) }
        #expect(error?.flag == flag)
    }

    @Test func aBadValueIsTheServicesProblem() throws {
        let parsed = try TimelineCommand.parse(["--family", "small"])
        #expect(parsed.target == "/widget/timeline?family=small")
        let problem = #expect(throws: Problem.self) { try WidgetRequest(try RequestTarget(parsing: parsed.target)) }
        #expect(problem?.parameter == "family")
    }
}
