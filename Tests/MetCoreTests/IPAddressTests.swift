import Testing

@testable import MetCore
@testable import MetEngine

@Suite struct IPAddressTests {
    @Test(arguments: [
        ("192.0.2.1", "192.0.2.1"),
        ("0.0.0.0", "0.0.0.0"),
        ("255.255.255.255", "255.255.255.255"),
        ("::", "::"),
        ("0:0:0:0:0:0:0:0", "::"),
        ("::1", "::1"),
        ("::0:0:1", "::1"),
        ("1::", "1::"),
        ("2001:DB8::1", "2001:db8::1"),
        ("2001:0db8:0000:0000:0000:0000:0000:0001", "2001:db8::1"),
        ("2001:db8:0:0:1:0:0:1", "2001:db8::1:0:0:1"),
        ("2001:0:0:1:0:0:0:1", "2001:0:0:1::1"),
        ("2001:db8:0:1:1:1:1:1", "2001:db8:0:1:1:1:1:1"),
        ("1:2:3:4:5:6:7::", "1:2:3:4:5:6:7:0"),
        ("::2:3:4:5:6:7:8", "0:2:3:4:5:6:7:8"),
        ("FE80::ABCD", "fe80::abcd"),
        ("0:0:0:0:0:ffff:192.0.2.1", "192.0.2.1"),
        ("::ffff:7f00:1", "127.0.0.1"),
        ("::FFFF:1.2.3.4", "1.2.3.4"),
        ("64:ff9b::192.0.2.33", "64:ff9b::c000:221"),
        ("::1.2.3.4", "::102:304"),
        ("1:2:3:4:5:6:1.2.3.4", "1:2:3:4:5:6:102:304"),
        ("ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.255", "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"),
    ])
    func anAddressIsReadAndWrittenInItsCanonicalForm(text: String, canonical: String) throws {
        let address = try #require(IPAddress(text))
        #expect(address.text == canonical)
        #expect(IPAddress(canonical) == address)
    }

    @Test(arguments: [
        "", "1.2.3", "01.2.3.4", "1.2.3.04", "256.1.1.1", "1.2.3.4.5", "1.2.3.4.", ".1.2.3.4", "1..2.3", "127.1",
        "0x7f.0.0.1", "1.2.3.-4", "１.2.3.4", " 1.2.3.4", "1.2.3.4 ", "::1::", ":::", ":1::", "1:::2", "::1:",
        "1:2:3:4:5:6:7", "1:2:3:4:5:6:7:8:9", "1:2:3:4:5:6:7:8::", "12345::", "::g", "1.2.3.4::", "::1.2.3",
        "::1.2.3.4:5", "::01.2.3.4", "::ffff:256.0.0.1", "1:2:3:4:5:6:7:1.2.3.4", "fe80::1%eth0", "[::1]",
        "2001:db8::/32", "ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.255:1",
    ])
    func anythingElseIsRefused(text: String) {
        #expect(IPAddress(text) == nil)
    }

    @Test func anIPv4MappedAddressIsTheIPv4Address() throws {
        let mapped = try #require(IPAddress("::ffff:192.0.2.1"))
        let plain = try #require(IPAddress("192.0.2.1"))
        #expect(mapped == plain && mapped.hashValue == plain.hashValue)
        #expect(mapped.isIPv4 && plain.isIPv4)
        #expect(IPAddress("::1")?.isIPv4 == false && IPAddress("::102:304")?.isIPv4 == false)
    }

    @Test(
        arguments: [
            ([192, 0, 2, 1], "192.0.2.1"),
            ([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF, 192, 0, 2, 1], "192.0.2.1"),
            ([0x20, 0x01, 0x0D, 0xB8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1], "2001:db8::1"),
            ([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1], "::1"),
        ] as [([UInt8], String)])
    func rawBytesAreReadInNetworkOrder(bytes: [UInt8], text: String) {
        #expect(IPAddress(bytes: bytes) == IPAddress(text))
    }

    @Test(
        arguments: [
            [], [127, 0, 0], [127, 0, 0, 1, 0], Array(repeating: 0, count: 15), Array(repeating: 0, count: 17),
        ]
            as [[UInt8]])
    func onlyFourOrSixteenBytesAreAnAddress(bytes: [UInt8]) {
        #expect(IPAddress(bytes: bytes) == nil)
    }

    @Test(arguments: [
        ("127.0.0.1", true), ("127.255.255.254", true), ("::ffff:127.0.0.1", true), ("::1", true),
        ("128.0.0.1", false), ("126.255.255.255", false), ("::", false), ("::2", false), ("1::1", false),
        ("::127.0.0.1", false),
    ])
    func loopbackIs127Slash8AndColonColon1(text: String, isLoopback: Bool) throws {
        #expect(try #require(IPAddress(text)).isLoopback == isLoopback)
    }
}
