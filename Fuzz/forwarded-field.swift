// libFuzzer harness: the fields reverse proxies add (`X-Forwarded-For`, `Forwarded`, one line per
// input line), IP addresses and address ranges read from the input, and `TrustedProxies.client`
// on fields made from it. A parsed address or range reads back from its text as itself; the client
// is a trusted address only when every node was one, and never local with a forwarding field.
@testable import MetCore
@testable import MetEngine

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzForwardedField(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = UnsafeBufferPointer(start: data, count: size)
    let text = String(decoding: bytes, as: UTF8.self)
    let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)

    if let address = IPAddress(text) { checkRoundTrip(address) }
    if let address = IPAddress(bytes: bytes) { checkRoundTrip(address) }
    switch AddressRange.parse(text) {
    case .success(let range):
        precondition(AddressRange.parse(range.description) == .success(range), "\(range) does not read back")
    case .failure(let error):
        precondition(!error.reason.contains("\n"), "a reason on several lines")
    }

    let nodes = ForwardingFields.xForwardedFor(lines)
    let elements = ForwardingFields.forwarded(lines)
    for list in [nodes?.compactMap({ $0 }), elements?.compactMap(\.node)] {
        precondition((list?.count ?? 0) <= ForwardingFields.maxElements, "more elements than the bound")
        for case .address(let address) in list ?? [] { checkRoundTrip(address) }
    }
    precondition(nodes?.isEmpty != true && elements?.isEmpty != true, "an empty list is not a field")
    for proto in elements?.compactMap(\.proto) ?? [] {
        precondition(proto == proto.lowercased() && proto.first?.isLetter == true, "\(proto) is not a scheme")
    }

    // Each line as the value of every field a proxy writes, and each line as `name: value`.
    var forwarding = HTTPFields()
    var named = HTTPFields()
    for line in lines {
        for name in ["X-Forwarded-For", "Forwarded", "X-Forwarded-Proto"] { forwarding.append(name, line) }
        let parts = line.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
        named.append(String(parts[0]), parts.count == 2 ? String(parts[1]) : "")
    }
    let trusted = [range("127.0.0.0/8"), range("10.0.0.0/8")]
    let policies = [
        TrustedProxies(ranges: trusted, field: .xForwardedFor), TrustedProxies(ranges: trusted, field: .forwarded),
        TrustedProxies(ranges: [range("10.0.0.0/8")], field: .xForwardedFor), TrustedProxies.none,
    ]
    let peers = ["127.0.0.1", "10.9.8.7", "192.0.2.1", "::1", "::ffff:127.0.0.1", "2001:db8::1"].map { IPAddress($0) }
    for fields in [forwarding, named] {
        let hasForwardingField = fields.contains { field in
            ["forwarded", "x-forwarded-for", "x-forwarded-host", "x-forwarded-proto", "x-real-ip", "via"].contains {
                asciiLowercased(field.name) == $0
            }
        }
        precondition(TrustedProxies.hasForwardingField(fields) == hasForwardingField, "forwarding fields missed")
        for policy in policies {
            for peer in peers + [nil] {
                check(policy.client(peer: peer, fields: fields), policy: policy, peer: peer, fields: fields)
            }
        }
    }
    return 0
}

/// An address reads back from its text as itself, and its text from that.
func checkRoundTrip(_ address: IPAddress) {
    let again = IPAddress(address.text)
    precondition(again == address && again?.text == address.text, "\(address.text) does not read back")
}

/// What `policy` answered for a request from `peer` with `fields`.
func check(_ client: RequestClient, policy: TrustedProxies, peer: IPAddress?, fields: HTTPFields) {
    precondition(!client.address.isEmpty && !client.fairnessKey.isEmpty, "an empty address or key")
    precondition([nil, "http", "https"].contains(client.forwardedProto), "proto \(client.forwardedProto ?? "")")
    let isTrusted = peer.map(policy.trusts) ?? false
    let isLocal = peer?.isLoopback == true && !isTrusted && !TrustedProxies.hasForwardingField(fields)
    precondition(client.isLocal == isLocal, "isLocal \(client.isLocal) for \(peer?.text ?? "-")")
    guard let peer, isTrusted else {
        precondition(!client.viaProxy && client.forwardedProto == nil, "an untrusted peer was believed")
        precondition(client.address == peer?.text ?? "-", "\(client.address) is not the peer")
        return
    }
    let nodes: [ForwardedNode]? =
        switch policy.field {
        // An element that is no node stands for a proxy that did not say, as `unknown` does.
        case .xForwardedFor:
            ForwardingFields.xForwardedFor(fields.values(for: "X-Forwarded-For"))?.map { $0 ?? .unknown }
        case .forwarded: ForwardingFields.forwarded(fields.values(for: "Forwarded"))?.map { $0.node ?? .unknown }
        }
    guard let nodes else {
        precondition(!client.viaProxy && client.address == peer.text, "a malformed field was believed")
        return
    }
    precondition(client.viaProxy, "a well-formed field was not read")
    let texts = nodes.map { node in
        switch node {
        case .address(let address): address.text
        case .unknown: "unknown"
        case .obfuscated(let identifier): identifier
        }
    }
    precondition(texts.contains(client.address), "\(client.address) is none of the nodes")
    let addresses = nodes.map { node -> IPAddress? in
        if case .address(let address) = node { return address }
        return nil
    }
    if let answer = IPAddress(client.address), policy.trusts(answer) {
        precondition(
            addresses.allSatisfy { $0.map(policy.trusts) ?? false } && addresses.first == answer,
            "\(client.address) is a trusted proxy, not the client")
    }
}

/// `text` with A–Z folded to a–z and nothing else changed.
func asciiLowercased(_ text: String) -> String {
    String(decoding: text.utf8.map { (0x41...0x5A).contains($0) ? $0 | 0x20 : $0 }, as: UTF8.self)
}

/// The block `text`, which must be one.
func range(_ text: String) -> AddressRange {
    guard case .success(let range) = AddressRange.parse(text) else { preconditionFailure("\(text) is not a block") }
    return range
}
