import Testing

@testable import MetCore
@testable import MetEngine

@Suite struct CORSPolicyTests {
    @Test(arguments: [
        ("*", CORSPolicy.any),
        (" * ", .any),
        ("https://app.example", .origins(["https://app.example"])),
        ("https://app.example,http://localhost:5173", .origins(["https://app.example", "http://localhost:5173"])),
        ("https://app.example, http://localhost:5173", .origins(["https://app.example", "http://localhost:5173"])),
        ("HTTPS://App.Example:443", .origins(["https://app.example"])),
        ("http://a.example:80,http://a.example", .origins(["http://a.example"])),
        ("http://a.example:443", .origins(["http://a.example:443"])),
        ("http://127.0.0.1:8080", .origins(["http://127.0.0.1:8080"])),
        ("http://[::1]:3000", .origins(["http://[::1]:3000"])),
        ("chrome-extension://abcdef", .origins(["chrome-extension://abcdef"])),
    ])
    func originsAreSerializedAsBrowsersSendThem(text: String, policy: CORSPolicy) {
        #expect(CORSPolicy.parse(text) == .success(policy))
    }

    @Test(arguments: [
        ("http://a.example/", "drop '/'"),
        ("http://a.example/app", "drop '/app'"),
        ("http://a.example?x", "no path, query"),
        ("http://a.example,", "empty origin"),
        ("http://a.example http://b.example", "visible ASCII"),
        ("*,http://a.example", "'*' cannot"),
        ("a.example", "scheme://host"),
        ("http://", "host is missing"),
        ("http://a.example:0", "port"),
        ("http://a.example:65536", "port"),
        ("http://a.example:", "port"),
        ("http://user@a.example", "user information"),
        ("http://*.example", "letters, digits"),
        ("http://[::1", "']'"),
        ("1http://a.example", "scheme"),
        ("", "empty origin"),
        ("http://a.éxample", "visible ASCII"),
    ])
    func aValueThatIsNotAnOriginListIsRefusedWithItsReason(text: String, reason: String) throws {
        guard case .failure(let error) = CORSPolicy.parse(text) else {
            Issue.record("\(text) was accepted")
            return
        }
        #expect(error.reason.contains(reason), "\(error.reason)")
    }

    @Test func aListIsBounded() {
        let many = (1...65).map { "http://h\($0).example" }.joined(separator: ",")
        #expect(CORSPolicy.parse(many) == .failure(CORSPolicyError("more than 64 origins")))
    }

    @Test func theFlagTakesAListAndRefusesAPath() throws {
        let configuration = try ServerConfiguration.parse(
            arguments: ["--cors-origin", "https://app.example,http://localhost:5173"], environment: [:],
            processorCount: 2)
        #expect(configuration.access.cors == .origins(["https://app.example", "http://localhost:5173"]))
        #expect(throws: ConfigurationError.self) {
            try ServerConfiguration.parse(
                arguments: ["--cors-origin", "http://a.example/"], environment: [:], processorCount: 2)
        }
    }
}
