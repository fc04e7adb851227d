import HTTPGrammar
import Testing

@testable import HTTPWire

@Suite("Request head rules (RFC 9112)")
struct RequestHeadRulesTests {
    private func parse(_ bytes: [UInt8]) throws -> RequestHead {
        try bytes.withUnsafeBytes { (buffer) in try RequestHead(parsing: buffer) }
    }

    private func failure(_ bytes: [UInt8]) -> FailureKind? {
        do {
            _ = try parse(bytes)
            return nil
        } catch {
            return (error as? WireError).map(FailureKind.init)
        }
    }

    private func failure(_ text: String) -> FailureKind? { failure(Array(text.utf8)) }

    /// The values of the fields named `name` (case-insensitively), in order.
    private func values(_ head: RequestHead, _ name: String) -> [String] {
        head.fields.filter { Grammar.equalsIgnoringCase($0.name.utf8, name.utf8) }.map(\.value)
    }

    @Test(arguments: [
        "GET / HTTP/1.1\nHost: x\n\n",
        "GET / HTTP/1.1\r\nHost: x\n\r\n",
        "GET / HTTP/1.1\nHost: x\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: x\r\nX: y\n\r\n",
        "\nGET / HTTP/1.1\r\nHost: x\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: x\r\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: x\r\nX: a\rb\r\n\r\n",
    ])
    func bareLineFeedsAndCarriageReturnsAreRefused(text: String) {
        #expect(failure(text) == .malformed)
    }

    @Test(
        arguments: [
            [0x80], [0xC3, 0xA9], [0xFF], [0x7F], [0x01], [0x09],
        ] as [[UInt8]])
    func targetBytesOutsideVisibleASCIIAreRefused(bytes: [UInt8]) {
        let request = Array("GET /a".utf8) + bytes + Array(" HTTP/1.1\r\nHost: x\r\n\r\n".utf8)
        #expect(failure(request) == .malformed)
    }

    @Test(arguments: [
        ("GET", "/objects/1?q=a", "/objects/1?q=a", "x"),
        ("GET", "http://x/health", "/health", "x"),
        ("GET", "HTTPS://other.example:8443/a/b?c=d", "/a/b?c=d", "other.example:8443"),
        ("GET", "http://x", "/", "x"),
        ("GET", "http://x?a=1", "/?a=1", "x"),
        ("GET", "http://[::1]:80/health", "/health", "[::1]:80"),
        ("OPTIONS", "*", "*", "x"),
        ("CONNECT", "example.org:443", "example.org:443", "x"),
    ])
    func targetsInAValidFormAreRoutedByPathAndQuery(method: String, target: String, routed: String, host: String)
        throws
    {
        let head = try parse(Array("\(method) \(target) HTTP/1.1\r\nHost: x\r\n\r\n".utf8))
        #expect(head.target == routed)
        #expect(values(head, "Host") == [host])
    }

    @Test(arguments: [
        ("GET", "*"), ("GET", "example.org:443"), ("GET", "objects/1"), ("GET", "ftp://x/a"),
        ("GET", "http:/x/a"), ("GET", "http://u@x/a"), ("GET", "http:///a"), ("GET", "http://:80/a"),
        ("GET", "http://x:99999/a"), ("OPTIONS", "**"), ("CONNECT", "example.org"), ("CONNECT", "/a"),
        ("CONNECT", ":443"),
    ])
    func targetsInNoValidFormAreRefused(method: String, target: String) {
        #expect(failure("\(method) \(target) HTTP/1.1\r\nHost: x\r\n\r\n") == .invalidTarget)
    }

    @Test(arguments: [
        "x", "example.org", "example.org:8080", "127.0.0.1", "127.0.0.1:80", "[::1]", "[::1]:8080",
        "[2001:db8::7]", "[v1.fe80::a+en1]", "a%20b", "x:", "x:65535", "", "sub-delims!$&'()*+,;=",
    ])
    func validHostValuesAreAccepted(host: String) throws {
        #expect(values(try parse(Array("GET / HTTP/1.1\r\nHost: \(host)\r\n\r\n".utf8)), "host") == [host])
    }

    @Test(arguments: [
        "a b", "x, y", "x:65536", "x:8a", "x:123456", "u@x", "x/y", "x?y", "[::1", "[::g]", "[::1]x", "::1",
        "[]", "[v1.]", "a%2", "a%zz", "x:-1", "[1.2.3.4]", "x#y",
    ])
    func invalidHostValuesAreRefused(host: String) {
        #expect(failure("GET / HTTP/1.1\r\nHost: \(host)\r\n\r\n") == .malformed)
        #expect(failure("GET / HTTP/1.0\r\nHost: \(host)\r\n\r\n") == .malformed)
    }

    @Test(
        arguments: [
            ("GET / HTTP/1.1\r\n\r\n", FailureKind.malformed),
            ("GET / HTTP/1.1\r\nHost: x\r\nHost: x\r\n\r\n", .malformed),
            ("GET / HTTP/1.0\r\nHost: x\r\nhost: y\r\n\r\n", .malformed),
            ("GET / HTTP/1.0\r\n\r\n", nil),
            ("GET / HTTP/1.0\r\nHost: x\r\n\r\n", nil),
            ("GET / HTTP/1.1\r\nHOST: x\r\n\r\n", nil),
        ] as [(String, FailureKind?)])
    func http11NeedsExactlyOneHost(text: String, expected: FailureKind?) {
        #expect(failure(text) == expected)
    }
}
