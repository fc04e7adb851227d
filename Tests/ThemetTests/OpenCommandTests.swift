import Testing

@testable import MetCore
@testable import MetEngine
@testable import themet

@Suite("themet open: the command line")
struct OpenCommandTests {
    @Test(arguments: [
        (["436535"], "/open/436535?format=json", []),
        (
            ["--upstream", "Fixtures", "1", "--data-dir=state"], "/open/1?format=json",
            ["--upstream", "Fixtures", "--data-dir", "state"]
        ),
        // IDs are the route's to judge: a malformed one is a 400, one with a slash a 404
        // (DeepLinkTargetTests), and `themet open` exits 1 with the problem.
        (["abc"], "/open/abc?format=json", []), (["01"], "/open/01?format=json", []),
        (["1/../2"], "/open/1%2F..%2F2?format=json", []),
    ])
    func theIDBecomesTheTargetAndTheRestGoesToTheServer(arguments: [String], target: String, server: [String]) throws {
        let parsed = try OpenCommand.parse(arguments)
        #expect(parsed.target == target)
        #expect(parsed.server == server)
        #expect(RouteCommands.named("open").map(ObjectIdentifier.init) == ObjectIdentifier(OpenCommand.self))
    }

    @Test(arguments: [([], "ID"), (["1", "2"], "ID"), (["--upstream"], "--upstream")])
    func badArgumentsNameTheirFlag(arguments: [String], flag: String) {
        let error = #expect(throws: ConfigurationError.self) { try OpenCommand.parse(arguments) }
        #expect(error?.flag == flag)
    }
}

@Suite("The start-up check of the upstream")
struct UpstreamProbeTests {
    @Test(arguments: [
        (UpstreamLocation.origin("https://collectionapi.metmuseum.org"), true),
        (.origin("http://met-proxy.lan:8080"), true), (.origin("http://127.0.0.1:4000"), false),
        (.origin("http://localhost:4000"), false), (.origin("http://[::1]:4000"), false),
        (.directory("Fixtures"), false),
    ])
    func onlyAnUpstreamElsewhereIsChecked(upstream: UpstreamLocation, checked: Bool) {
        #expect(UpstreamProbe.applies(to: upstream) == checked)
    }
}
