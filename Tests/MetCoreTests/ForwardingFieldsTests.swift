import Testing

@testable import MetCore
@testable import MetEngine

@Suite struct ForwardingFieldsTests {
    @Test(arguments: [
        (["203.0.113.7"], ["203.0.113.7"]),
        (["203.0.113.7, 10.0.0.1"], ["203.0.113.7", "10.0.0.1"]),
        (["203.0.113.7,10.0.0.1", "127.0.0.1"], ["203.0.113.7", "10.0.0.1", "127.0.0.1"]),
        ([" 1.2.3.4:5678 ,\t[2001:db8::1]:443 "], ["1.2.3.4", "2001:db8::1"]),
        (["2001:DB8::1", "[::1]"], ["2001:db8::1", "::1"]),
        (["::ffff:192.0.2.1"], ["192.0.2.1"]),
        (["unknown, UNKNOWN,Unknown"], ["unknown", "unknown", "unknown"]),
        ([", 1.2.3.4,,", "", " "], ["1.2.3.4"]),
        (["1.2.3.4:0", "[::1]:65535"], ["1.2.3.4", "::1"]),
    ])
    func xForwardedForIsAListOfAddresses(lines: [String], nodes: [String]) {
        #expect(ForwardingFields.xForwardedFor(lines) == nodes.map(node))
    }

    @Test(arguments: [[], [""], [" , ,"], [",", " "]] as [[String]])
    func anXForwardedForWithoutAnElementIsNone(lines: [String]) {
        #expect(ForwardingFields.xForwardedFor(lines) == nil)
    }

    /// Each element is read on its own: one that is no node is nil, and its neighbours stand.
    @Test(
        arguments: [
            "1.2.3.4 5.6.7.8", "1.2.3.4;5.6.7.8", "1.2.3.4:", "1.2.3.4:123456", "1.2.3.4:ab", "1.2.3.4:80:90",
            "[1.2.3.4]", "[2001:db8::1", "[2001:db8::1]443", "[2001:db8::1]:", "2001:db8::1]", "[]", "_hidden",
            "fe80::1%eth0", "bogus", "\"1.2.3.4\"", "for=1.2.3.4", "1.2.3", "unknown:80", "localhost",
        ])
    func anElementThatIsNoNodeIsNilAndTheOthersStand(element: String) {
        #expect(
            ForwardingFields.xForwardedFor(["10.0.0.1, \(element)", "10.0.0.2"]) == [
                node("10.0.0.1"), nil, node("10.0.0.2"),
            ])
    }

    @Test(arguments: [
        (["for=192.0.2.60;proto=http;by=203.0.113.43"], [element("192.0.2.60", "http")]),
        (["for=\"_gazonk\""], [element("_gazonk")]),
        (["For=\"[2001:db8:cafe::17]:4711\""], [element("2001:db8:cafe::17")]),
        (["for=192.0.2.43, for=198.51.100.17"], [element("192.0.2.43"), element("198.51.100.17")]),
        (
            ["for=192.0.2.43,for=\"[2001:db8:cafe::17]\";proto=HTTPS"],
            [element("192.0.2.43"), element("2001:db8:cafe::17", "https")]
        ),
        (["for=unknown", "for=\"10.0.0.1:80\""], [element("unknown"), element("10.0.0.1")]),
        (["for=UNKNOWN;proto=https"], [element("unknown", "https")]),
        (["proto=https"], [ForwardedElement(node: nil, proto: "https")]),
        (["for=\"192.0.2.1:_port-1\""], [element("192.0.2.1")]),
        (["for=\"_abc.def:_x\""], [element("_abc.def")]),
        (["for=\"\\1\\9\\2.0.2.1\""], [element("192.0.2.1")]),
        (["for=1.2.3.4;;proto=http;"], [element("1.2.3.4", "http")]),
        ([";", "for=1.2.3.4"], [ForwardedElement(node: nil, proto: nil), element("1.2.3.4")]),
        (["for=1.2.3.4;secret=\"a,b;c=d\\\"\";host=example.com"], [element("1.2.3.4")]),
        ([" , for=1.2.3.4 ,, \t"], [element("1.2.3.4")]),
        (["for=1.2.3.4;proto=\"https\""], [element("1.2.3.4", "https")]),
        (["for=1.2.3.4;PROTO=Web+DAV.1"], [element("1.2.3.4", "web+dav.1")]),
    ])
    func forwardedIsAListOfElements(lines: [String], elements: [ForwardedElement]) {
        #expect(ForwardingFields.forwarded(lines) == elements)
    }

    @Test(
        arguments: [
            [], [""], [" , "], ["for=[2001:db8::1]"], ["for=\"2001:db8::1\""], ["for=\"[1.2.3.4]\""],
            ["for=1.2.3.4;for=5.6.7.8"], ["for=1.2.3.4;FOR=5.6.7.8"], ["by=a;By=b"], ["for=1.2.3.4; proto=http"],
            ["for=1.2.3.4 ;proto=http"], ["for = 1.2.3.4"], ["for=1.2.3.4;proto=1http"],
            ["for=1.2.3.4;proto=\"ht tp\""],
            ["for=1.2.3.4;proto="], ["for=\"1.2.3.4"], ["for=\"1.2.3.4\\\""], ["for=_"], ["for=\"_a b\""],
            ["for=_abc:1"], ["for=\"1.2.3.4:123456\""], ["for=\"1.2.3.4:\""], ["for=\"[::1]:\""], ["for=\"[::1]x\""],
            ["for=1.2.3.4 for=5.6.7.8"], ["for="], ["=1.2.3.4"], ["for"], ["for=256.0.0.1"], ["for=1.2.3.4", "for="],
            ["for=\"\u{7}\""], ["for=\"1.2.3.4\"x"], ["for=localhost"], ["\"for\"=1.2.3.4"], ["for=1.2.3.4,;x"],
        ] as [[String]])
    func aMalformedForwardedIsNotBelieved(lines: [String]) {
        #expect(ForwardingFields.forwarded(lines) == nil)
    }

    @Test func aFieldHoldsAtMost64ElementsAcrossItsLines() {
        let addresses = (1...64).map { "10.0.0.\($0)" }
        let halves = [addresses[..<32].joined(separator: ","), addresses[32...].joined(separator: ",")]
        #expect(ForwardingFields.xForwardedFor(halves)?.count == 64)
        // X-Forwarded-For keeps the last 64: the hops nearest this server.
        #expect(
            ForwardingFields.xForwardedFor(halves + ["10.0.1.1"]) == (addresses.dropFirst() + ["10.0.1.1"]).map(node))
        let elements = halves.map { $0.split(separator: ",").map { "for=\($0)" }.joined(separator: ",") }
        #expect(ForwardingFields.forwarded(elements)?.count == 64)
        #expect(ForwardingFields.forwarded(elements + ["proto=http"]) == nil)
    }
}

/// The node `text` names: `unknown`, an `_obfuscated` identifier, or an address.
private func node(_ text: String) -> ForwardedNode {
    if text == "unknown" { return .unknown }
    if text.hasPrefix("_") { return .obfuscated(text) }
    guard let address = IPAddress(text) else { preconditionFailure("\(text) is not an address") }
    return .address(address)
}

/// A `Forwarded` element for `node` with `proto`.
private func element(_ text: String, _ proto: String? = nil) -> ForwardedElement {
    ForwardedElement(node: node(text), proto: proto)
}
