import Testing

@testable import MetCore
@testable import MetEngine

@Suite struct TrustedProxiesTests {
    /// Trusts the loopback proxy only, which writes `X-Forwarded-For`.
    static let loopback = TrustedProxies(ranges: [range("127.0.0.1")], field: .xForwardedFor)
    /// Trusts a proxy on this machine and an internal tier in 10.0.0.0/8, which write `Forwarded`.
    static let tiers = TrustedProxies(ranges: [range("127.0.0.0/8"), range("10.0.0.0/8")], field: .forwarded)

    @Test(arguments: [
        ("127.0.0.1", "127.0.0.1"),
        ("127.0.0.1, 10.0.0.0/8, ::1", "127.0.0.1,10.0.0.0/8,::1"),
        ("10.0.0.0/8,10.0.0.0/8,::ffff:10.0.0.0/104", "10.0.0.0/8"),
        ("", ""),
        ("  ", ""),
    ])
    func aListOfProxiesIsReadBackFromItsDescription(text: String, description: String) throws {
        let proxies = try TrustedProxies.parse(text, field: .forwarded).get()
        #expect(proxies.description == description && proxies.field == .forwarded)
        #expect(TrustedProxies.parse(description, field: .forwarded) == .success(proxies))
    }

    @Test(arguments: [
        ("127.0.0.1,", "an empty address range in the list"),
        (",127.0.0.1", "an empty address range in the list"),
        ("127.0.0.1, ,::1", "an empty address range in the list"),
        ("127.0.0.1,10.1.0.0/8", "'10.1.0.0/8' has bits set past /8: did you mean 10.0.0.0/8?"),
        ((1...65).map { "10.0.0.\($0)" }.joined(separator: ","), "more than 64 address ranges"),
    ])
    func aListWithAnyBadElementIsRefused(text: String, reason: String) {
        #expect(TrustedProxies.parse(text, field: .xForwardedFor) == .failure(AddressRangeError(reason)))
    }

    @Test func noneTrustsNoOne() throws {
        #expect(!TrustedProxies.none.trusts(try #require(IPAddress("127.0.0.1"))))
        #expect(TrustedProxies.none.field == .xForwardedFor && TrustedProxies.none.description.isEmpty)
    }

    @Test(arguments: [
        // An untrusted peer's forged field changes nothing.
        (
            Arrival("203.0.113.9", ["X-Forwarded-For": "198.51.100.1", "X-Forwarded-Proto": "https"]),
            direct("203.0.113.9")
        ),
        // The proxy on this machine appended its client to what that client sent.
        (Arrival("127.0.0.1", ["X-Forwarded-For": "203.0.113.7, 127.0.0.1"]), proxied("203.0.113.7")),
        (Arrival("127.0.0.1", ["X-Forwarded-For": "198.51.100.1, 203.0.113.7"]), proxied("203.0.113.7")),
        // Every node trusted: the left-most.
        (Arrival("127.0.0.1", ["X-Forwarded-For": "127.0.0.1, 127.0.0.1"]), proxied("127.0.0.1")),
        // What the client wrote to the left of the proxy's node is never read, whatever it is: a
        // client cannot become the proxy by spoiling the field.
        (Arrival("127.0.0.1", ["X-Forwarded-For": "bogus, 203.0.113.7"]), proxied("203.0.113.7")),
        (Arrival("127.0.0.1", ["X-Forwarded-For": "\"x\", [::1, 203.0.113.7"]), proxied("203.0.113.7")),
        (
            Arrival(
                "127.0.0.1", ["X-Forwarded-For": (1...100).map { "10.0.0.\($0)" }.joined(separator: ",") + ",1.2.3.4"]),
            proxied("1.2.3.4")
        ),
        // An element the trusted proxy wrote that is no node: the proxy did not say.
        (Arrival("127.0.0.1", ["X-Forwarded-For": "203.0.113.7, bogus"]), proxied("unknown", key: "127.0.0.1")),
        (
            Arrival("127.0.0.1", ["X-Forwarded-For": "bogus, 127.0.0.1"]),
            proxied("unknown", key: "127.0.0.1")
        ),
        // An absent field, or one with no element: the proxy itself.
        (Arrival("127.0.0.1", ["X-Forwarded-For": " , "]), direct("127.0.0.1")),
        (Arrival("127.0.0.1", ["User-Agent": "curl"]), direct("127.0.0.1")),
        // The field the proxy does not write is what the client sent: never read.
        (Arrival("127.0.0.1", ["Forwarded": "for=198.51.100.1"]), direct("127.0.0.1")),
        (
            Arrival("127.0.0.1", ["Forwarded": "for=198.51.100.1", "X-Forwarded-For": "203.0.113.7"]),
            proxied("203.0.113.7")
        ),
        // The scheme: the right-most X-Forwarded-Proto, when it is http or https.
        (
            Arrival("127.0.0.1", ["X-Forwarded-For": "203.0.113.7", "X-Forwarded-Proto": "http, HTTPS"]),
            proxied("203.0.113.7", proto: "https")
        ),
        (
            Arrival(
                "127.0.0.1",
                ["X-Forwarded-For": "203.0.113.7", "X-Forwarded-Proto": "https", "x-forwarded-proto": "http,"]),
            proxied("203.0.113.7", proto: "http")
        ),
        (
            Arrival("127.0.0.1", ["X-Forwarded-For": "203.0.113.7", "X-Forwarded-Proto": "wss"]),
            proxied("203.0.113.7")
        ),
        // A client the proxy calls unknown counts as that proxy.
        (Arrival("127.0.0.1", ["X-Forwarded-For": "unknown"]), proxied("unknown", key: "127.0.0.1")),
        (Arrival("::1", ["X-Forwarded-For": "2001:db8:1:2::7"]), direct("::1")),
        (Arrival(nil, ["X-Forwarded-For": "203.0.113.7"]), direct("-")),
    ])
    func theLoopbackProxyIsBelievedAndNoOneElse(arrival: Arrival, client: RequestClient) {
        #expect(Self.loopback.client(peer: arrival.peer, fields: arrival.fields) == client)
    }

    @Test(arguments: [
        // A chain of two trusted proxies: the edge (10.1.0.1) and the one on this machine.
        (
            Arrival("127.0.0.1", ["Forwarded": "for=203.0.113.7;proto=https, for=10.1.0.1"]),
            proxied("203.0.113.7", proto: "https")
        ),
        (
            Arrival(
                "127.0.0.1", ["Forwarded": "for=198.51.100.1;proto=http", "forwarded": "for=203.0.113.7,for=10.1.0.1"]),
            proxied("203.0.113.7")
        ),
        (
            Arrival("10.1.0.1", ["Forwarded": "for=\"[2001:db8:cafe::17]:4711\";proto=HTTPS"]),
            proxied("2001:db8:cafe::17", proto: "https")
        ),
        (
            Arrival("127.0.0.1", ["Forwarded": "for=10.1.0.2;proto=https, for=10.1.0.1;proto=http"]),
            proxied("10.1.0.2", proto: "http")
        ),
        (Arrival("127.0.0.1", ["Forwarded": "for=_hidden, for=10.1.0.1"]), proxied("_hidden")),
        (Arrival("127.0.0.1", ["Forwarded": "for=unknown, for=10.1.0.1"]), proxied("unknown", key: "10.1.0.1")),
        // An element without for= stops the walk: that proxy did not say who sent it.
        (
            Arrival("127.0.0.1", ["Forwarded": "for=203.0.113.7, proto=https"]),
            proxied("unknown", key: "127.0.0.1", proto: "https")
        ),
        // A malformed Forwarded is not believed: the proxy is logged, with a share of its own.
        (
            Arrival("127.0.0.1", ["Forwarded": "for=203.0.113.7;for=10.0.0.1"]),
            RequestClient(
                address: "127.0.0.1", fairnessKey: "malformed field via 127.0.0.1", isLocal: false,
                forwardedProto: nil, viaProxy: false)
        ),
        // X-Forwarded-For is what the client sent through proxies that write Forwarded.
        (Arrival("127.0.0.1", ["X-Forwarded-For": "198.51.100.1"]), direct("127.0.0.1")),
        (
            Arrival("127.0.0.1", ["X-Forwarded-For": "198.51.100.1", "Forwarded": "for=203.0.113.7"]),
            proxied("203.0.113.7")
        ),
    ])
    func aChainOfTrustedProxiesIsWalkedFromTheRight(arrival: Arrival, client: RequestClient) {
        #expect(Self.tiers.client(peer: arrival.peer, fields: arrival.fields) == client)
    }

    @Test(arguments: [
        "Forwarded", "X-Forwarded-For", "X-Forwarded-Host", "X-Forwarded-Proto", "X-Real-IP", "Via", "x-real-ip",
        "VIA", "FORWARDED",
    ])
    func aRequestWithAnyForwardingFieldIsNotLocal(name: String) throws {
        var fields: HTTPFields = ["User-Agent": "curl"]
        fields.append(name, "")
        #expect(TrustedProxies.hasForwardingField(fields))
        for proxies in [TrustedProxies.none, Self.tiers] {
            for peer in ["127.0.0.1", "::1", "::ffff:127.0.0.2"] {
                #expect(!proxies.client(peer: IPAddress(peer), fields: fields).isLocal, "\(peer) with \(name)")
            }
        }
    }

    @Test func onlyALoopbackPeerThatIsNotATrustedProxyIsLocal() {
        let plain: HTTPFields = ["User-Agent": "curl", "Accept": "*/*", "X-Request-Id": "a1"]
        #expect(!TrustedProxies.hasForwardingField(plain))
        for peer in ["127.0.0.1", "127.1.2.3", "::1", "::ffff:127.0.0.1"] {
            #expect(TrustedProxies.none.client(peer: IPAddress(peer), fields: plain) == direct(peer, isLocal: true))
        }
        #expect(Self.loopback.client(peer: IPAddress("127.0.0.2"), fields: plain).isLocal)
        #expect(!Self.loopback.client(peer: IPAddress("127.0.0.1"), fields: plain).isLocal)
        #expect(!Self.tiers.client(peer: IPAddress("127.0.0.1"), fields: plain).isLocal)
        #expect(!TrustedProxies.none.client(peer: IPAddress("192.0.2.1"), fields: plain).isLocal)
        #expect(!TrustedProxies.none.client(peer: nil, fields: plain).isLocal)
    }

    /// On a LAN every IPv6 host shares one /64: a client is its whole address.
    @Test(arguments: [
        ("2001:db8:1:2::7", "2001:db8:1:2:aaaa:bbbb:cccc:dddd", false),
        ("2001:db8:1:2::7", "2001:db8:1:2:0:0:0:7", true),
        ("192.0.2.1", "192.0.2.2", false),
        ("192.0.2.1", "::ffff:192.0.2.1", true),
    ])
    func aClientIsItsWholeAddress(first: String, second: String, share: Bool) {
        let keys = [first, second].map { client in
            let node = client.contains(":") ? "[\(client)]:443" : "\(client):443"
            return Self.loopback.client(peer: IPAddress("127.0.0.1"), fields: ["X-Forwarded-For": node]).fairnessKey
        }
        #expect((keys[0] == keys[1]) == share, "\(keys)")
        let direct = [first, second].map { TrustedProxies.none.client(peer: IPAddress($0), fields: [:]).fairnessKey }
        #expect(direct == keys)
    }
}

/// A request as the server sees it arrive: its connection's peer and its fields.
struct Arrival: Sendable, CustomStringConvertible {
    var peer: IPAddress?
    var fields: HTTPFields

    init(_ peer: String?, _ fields: HTTPFields) {
        self.peer = peer.flatMap { IPAddress($0) }
        self.fields = fields
    }

    var description: String { "\(peer?.text ?? "-") \(fields.map { "\($0.name): \($0.value)" })" }
}

/// The block `text`, which must be one.
private func range(_ text: String) -> AddressRange {
    guard case .success(let range) = AddressRange.parse(text) else { preconditionFailure("\(text) is not a block") }
    return range
}

/// The client when it is the connection's peer `address` (`-`: unknown).
private func direct(_ address: String, isLocal: Bool = false) -> RequestClient {
    let peer = IPAddress(address)
    return RequestClient(
        address: peer?.text ?? address, fairnessKey: peer?.text ?? address, isLocal: isLocal,
        forwardedProto: nil, viaProxy: false)
}

/// The client a trusted proxy named: `address`, its own fairness key unless `key` is given.
private func proxied(_ address: String, key: String? = nil, proto: String? = nil) -> RequestClient {
    RequestClient(
        address: address, fairnessKey: key ?? IPAddress(address)?.text ?? address, isLocal: false,
        forwardedProto: proto, viaProxy: true)
}
