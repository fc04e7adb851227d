import Testing

@testable import MetCore
@testable import MetEngine

@Suite struct AddressRangeTests {
    @Test(arguments: [
        ("10.0.0.0/8", "10.0.0.0/8"),
        (" 10.0.0.0/8\t", "10.0.0.0/8"),
        ("172.16.0.0/12", "172.16.0.0/12"),
        ("192.0.2.128/25", "192.0.2.128/25"),
        ("0.0.0.0/0", "0.0.0.0/0"),
        ("127.0.0.1", "127.0.0.1"),
        ("127.0.0.1/32", "127.0.0.1"),
        ("::1", "::1"),
        ("::1/128", "::1"),
        ("2001:DB8::/32", "2001:db8::/32"),
        ("2001:db8:1:2::/64", "2001:db8:1:2::/64"),
        ("::/0", "::/0"),
        ("::ffff:10.0.0.0/104", "10.0.0.0/8"),
        ("::ffff:0:0/96", "0.0.0.0/0"),
    ])
    func aBlockIsWrittenAsItIsReadBack(text: String, description: String) throws {
        guard case .success(let range) = AddressRange.parse(text) else {
            Issue.record("\(text) was refused")
            return
        }
        #expect(range.description == description)
        #expect(AddressRange.parse(description) == .success(range))
    }

    @Test(arguments: [
        ("10.0.0.0/8", "10.0.0.0", true), ("10.0.0.0/8", "10.255.255.255", true), ("10.0.0.0/8", "11.0.0.0", false),
        ("10.0.0.0/8", "9.255.255.255", false), ("10.0.0.0/8", "::ffff:10.1.2.3", true),
        ("10.0.0.0/8", "::a01:203", false),
        ("172.16.0.0/12", "172.31.255.255", true), ("172.16.0.0/12", "172.32.0.0", false),
        ("127.0.0.1", "127.0.0.1", true), ("127.0.0.1", "127.0.0.2", false),
        ("0.0.0.0/0", "203.0.113.7", true), ("0.0.0.0/0", "::1", false), ("0.0.0.0/0", "2001:db8::1", false),
        ("::1", "::1", true), ("::1", "127.0.0.1", false),
        ("2001:db8::/32", "2001:db8:ffff::1", true), ("2001:db8::/32", "2001:db9::1", false),
        ("2001:db8:1:2::/64", "2001:db8:1:2:ffff:ffff:ffff:ffff", true), ("2001:db8:1:2::/64", "2001:db8:1:3::", false),
        ("::/0", "2001:db8::1", true),
    ])
    func aBlockHoldsTheAddressesThatShareItsPrefix(range: String, address: String, contains: Bool) throws {
        let range = try AddressRange.parse(range).get()
        #expect(range.contains(try #require(IPAddress(address))) == contains)
    }

    @Test(arguments: [
        ("10.1.2.3/8", "'10.1.2.3/8' has bits set past /8: did you mean 10.0.0.0/8?"),
        ("192.168.1.1/24", "'192.168.1.1/24' has bits set past /24: did you mean 192.168.1.0/24?"),
        ("2001:db8::1/32", "'2001:db8::1/32' has bits set past /32: did you mean 2001:db8::/32?"),
        ("10.0.0.0/33", "'10.0.0.0/33' has no valid prefix length: after '/' a number from 0 to 32"),
        ("::/129", "'::/129' has no valid prefix length: after '/' a number from 0 to 128"),
        ("10.0.0.0/", "a number from 0 to 32"),
        ("10.0.0.0/08", "a number from 0 to 32"),
        ("10.0.0.0/-1", "a number from 0 to 32"),
        ("10.0.0.0/8/8", "a number from 0 to 32"),
        ("10.0.0.0/ 8", "a number from 0 to 32"),
        ("[::1]", "'[::1]' is not an address range: write an IPv6 address without brackets"),
        ("fe80::1%eth0", "'fe80::1%eth0' is not an address range: a zone ID (%…) is not part of an address"),
        ("10.0.0", "'10.0.0' is not an address range: expected an address or a block such as 10.0.0.0/8"),
        ("localhost", "'localhost' is not an address range"),
        ("/8", "'/8' is not an address range"),
        ("1.2.3.4\n", "'1.2.3.4\\n' is not an address range"),
        ("", "an empty address range"),
        (" ", "an empty address range"),
    ])
    func aValueThatIsNotABlockIsRefusedWithItsReason(text: String, reason: String) {
        guard case .failure(let error) = AddressRange.parse(text) else {
            Issue.record("\(text) was accepted")
            return
        }
        #expect(error.reason.contains(reason), "\(error.reason)")
        #expect(!error.reason.contains("\n"))
    }
}
