import HTTPGrammar

/// The field the trusted proxies write their clients in. Only one is ever read: a proxy appends to
/// the field it is configured for and passes the other through untouched, just as the client sent
/// it, so reading both would let a client choose its own address.
public enum ForwardingField: String, Sendable {
    /// `X-Forwarded-For`, with `X-Forwarded-Proto` for the scheme.
    case xForwardedFor = "x-forwarded-for"
    /// `Forwarded` (RFC 7239), its `for` and `proto` parameters.
    case forwarded
}

/// The reverse proxies whose word on a request's client is believed: the address blocks they
/// connect from, and the field they write.
public struct TrustedProxies: Sendable, Equatable, CustomStringConvertible {
    /// The blocks a trusted proxy connects from; none trusts no one.
    public var ranges: [AddressRange]
    /// The field the proxies write; the other is never read.
    public var field: ForwardingField

    /// The most ranges a list may hold.
    public static let maxRanges = 64

    /// Trusts no proxy: every request's client is its connection's peer.
    public static let none = TrustedProxies(ranges: [], field: .xForwardedFor)

    /// The names of the fields a proxy adds: a request with any of them came through one.
    package static let forwardingFieldNames = [
        "forwarded", "x-forwarded-for", "x-forwarded-host", "x-forwarded-proto", "x-real-ip", "via",
    ]

    /// Trusts proxies connecting from `ranges` and reads `field`.
    public init(ranges: [AddressRange], field: ForwardingField) {
        self.ranges = ranges
        self.field = field
    }

    /// Address ranges (`AddressRange.parse(_:)`) separated by commas, such as
    /// `127.0.0.1, 10.0.0.0/8, ::1`, repeats kept once, at most `maxRanges`; an empty or blank text
    /// trusts no one. Returns the reason when `text` is not such a list: an empty element, too
    /// many ranges, or the first range refused.
    public static func parse(_ text: String, field: ForwardingField) -> Result<TrustedProxies, AddressRangeError> {
        var ranges: [AddressRange] = []
        if !Substring(text).trimmingSpaces().isEmpty {
            for element in text.split(separator: ",", omittingEmptySubsequences: false) {
                guard !element.trimmingSpaces().isEmpty else {
                    return .failure(AddressRangeError("an empty address range in the list"))
                }
                switch AddressRange.parse(String(element)) {
                case .success(let range):
                    if !ranges.contains(range) { ranges.append(range) }
                case .failure(let error):
                    return .failure(error)
                }
                guard ranges.count <= maxRanges else {
                    return .failure(AddressRangeError("more than \(maxRanges) address ranges"))
                }
            }
        }
        return .success(TrustedProxies(ranges: ranges, field: field))
    }

    /// The ranges joined with commas, as `parse(_:field:)` reads them back (empty when none).
    public var description: String {
        ranges.map(\.description).joined(separator: ",")
    }

    /// Whether a connection from `address` is a trusted proxy's.
    public func trusts(_ address: IPAddress) -> Bool {
        ranges.contains { $0.contains(address) }
    }

    /// The client of a request that came from `peer` (nil when the connection's address could not
    /// be read) with `fields`. From a peer that is not trusted, the client is the peer and no
    /// forwarding field is believed. From a trusted proxy, its field is walked from the right
    /// (the latest hop) past the trusted addresses: the first node that is not one is the client,
    /// or the left-most read when all are; a `Forwarded` element without `for`, or an
    /// `X-Forwarded-For` element that is no node, stops the walk as `unknown` would, since its
    /// proxy did not say who sent it (what the client wrote further left is never read). Without
    /// the field, the proxy itself is the client. A `Forwarded` field malformed anywhere is not
    /// believed: the proxy is logged as the client, and its share of the upstream is one of its
    /// own (`malformedShare`), so that a client cannot take the proxy's by spoiling the field.
    /// When nothing is trusted no field is read, except the names of a loopback peer's fields, to
    /// know whether it is local.
    public func client(peer: IPAddress?, fields: HTTPFields) -> RequestClient {
        guard let peer, trusts(peer) else {
            return RequestClient(
                address: peer?.text ?? "-", fairnessKey: peer?.text ?? "-",
                isLocal: peer?.isLoopback == true && !Self.hasForwardingField(fields), forwardedProto: nil,
                viaProxy: false)
        }
        let nodes: [ForwardedNode]
        var elements: [ForwardedElement] = []
        switch field {
        case .xForwardedFor:
            guard let parsed = ForwardingFields.xForwardedFor(fields.values(for: "X-Forwarded-For")) else {
                return RequestClient(
                    address: peer.text, fairnessKey: peer.text, isLocal: false, forwardedProto: nil,
                    viaProxy: false)
            }
            nodes = parsed.map { $0 ?? .unknown }
        case .forwarded:
            let lines = fields.values(for: "Forwarded")
            guard let parsed = ForwardingFields.forwarded(lines) else {
                return RequestClient(
                    address: peer.text, fairnessKey: lines.isEmpty ? peer.text : Self.malformedShare(of: peer),
                    isLocal: false, forwardedProto: nil, viaProxy: false)
            }
            elements = parsed
            nodes = parsed.map { $0.node ?? .unknown }
        }
        // The proxy that wrote the node at `index`: the peer for the last one.
        var writer = peer
        var index = nodes.count - 1
        while index > 0, case .address(let address) = nodes[index], trusts(address) {
            writer = address
            index -= 1
        }
        let proto: String?
        switch field {
        case .xForwardedFor:
            proto = Self.lastProto(fields.values(for: "X-Forwarded-Proto"))
        case .forwarded:
            // Only the elements trusted proxies wrote: the client's and those to its right.
            proto = elements[index...].last { $0.proto != nil }?.proto.flatMap(Self.webScheme)
        }
        switch nodes[index] {
        case .address(let address):
            return RequestClient(
                address: address.text, fairnessKey: address.text, isLocal: false, forwardedProto: proto,
                viaProxy: true)
        case .unknown:
            return RequestClient(
                address: "unknown", fairnessKey: writer.text, isLocal: false, forwardedProto: proto,
                viaProxy: true)
        case .obfuscated(let identifier):
            return RequestClient(
                address: identifier, fairnessKey: identifier, isLocal: false, forwardedProto: proto, viaProxy: true)
        }
    }

    /// The share of the upstream of the requests through trusted proxy `peer` whose field could not
    /// be read.
    package static func malformedShare(of peer: IPAddress) -> String {
        "malformed field via " + peer.text
    }

    /// Whether `fields` include any field a proxy adds (`forwardingFieldNames`): a request that has
    /// one came through a proxy, even from this machine. Only the names are looked at.
    public static func hasForwardingField(_ fields: HTTPFields) -> Bool {
        fields.contains { field in
            forwardingFieldNames.contains { Grammar.equalsIgnoringCase(field.name.utf8, $0.utf8) }
        }
    }

    /// The right-most element of an `X-Forwarded-Proto` list (all its lines) as `webScheme` has it.
    private static func lastProto(_ lines: [String]) -> String? {
        for line in lines.reversed() {
            if let last = line.split(separator: ",").lazy.map({ $0.trimmingSpaces() }).last(where: { !$0.isEmpty }) {
                return webScheme(last)
            }
        }
        return nil
    }

    /// `http` or `https` in lower case when `scheme` is either in any case, else nil.
    private static func webScheme(_ scheme: some StringProtocol) -> String? {
        ["http", "https"].first { Grammar.equalsIgnoringCase(scheme.utf8, $0.utf8) }
    }
}
