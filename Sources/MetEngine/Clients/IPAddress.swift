import HTTPGrammar

/// An IPv4 or IPv6 address, read strictly from text or from a socket's bytes. An IPv4 address is
/// held as its IPv4-mapped IPv6 form (`::ffff:a.b.c.d`), and an IPv4-mapped address is that IPv4
/// address: a dual-stack socket reports IPv4 peers so, and both spellings must name one client.
public struct IPAddress: Sendable, Hashable, CustomStringConvertible {
    /// The first 64 of the 128 bits, in network order from the most significant bit.
    package let high: UInt64
    /// The last 64 bits.
    package let low: UInt64

    /// The address whose 128 bits are `high` then `low`.
    package init(high: UInt64, low: UInt64) {
        self.high = high
        self.low = low
    }

    /// An IPv4 dotted quad (exactly four decimal octets from 0 to 255, without leading zeros), or an
    /// IPv6 address as RFC 4291 §2.2 writes it (1 to 4 hex digits a group, in either case, one `::`
    /// at most, a dotted quad in the last 32 bits allowed); nil for anything else, including
    /// surrounding spaces, brackets and zone IDs (`%eth0`).
    public init?(_ text: some StringProtocol) {
        self.init(utf8: text.utf8)
    }

    /// The text of `init(_:)` as UTF-8 bytes, for parsers that hold bytes.
    package init?(utf8: some Collection<UInt8>) {
        // The longest address is 45 bytes (six groups of four digits and a dotted quad).
        let text = Array(utf8.prefix(46))
        guard text.count <= 45 else { return nil }
        if text.contains(Self.colon) {
            guard let (high, low) = Self.ipv6(text[...]) else { return nil }
            self.init(high: high, low: low)
        } else {
            guard let ipv4 = Self.ipv4(text[...]) else { return nil }
            self.init(high: 0, low: Self.mappedPrefix | UInt64(ipv4))
        }
    }

    /// 4 bytes (IPv4) or 16 bytes (IPv6), in network order, as `getpeername` gives them; nil for
    /// any other count.
    public init?(bytes: some Collection<UInt8>) {
        let bytes = Array(bytes.prefix(17))
        let value = bytes.reduce(into: (high: UInt64(0), low: UInt64(0))) { value, byte in
            value = (value.high << 8 | value.low >> 56, value.low << 8 | UInt64(byte))
        }
        switch bytes.count {
        case 4: self.init(high: 0, low: Self.mappedPrefix | value.low)
        case 16: self.init(high: value.high, low: value.low)
        default: return nil
        }
    }

    /// Whether this is an IPv4 address, given as such or IPv4-mapped.
    public var isIPv4: Bool { high == 0 && low >> 32 == 0xFFFF }

    /// Whether this is a loopback address: 127.0.0.0/8 (mapped or not) or `::1`.
    public var isLoopback: Bool {
        isIPv4 ? low >> 24 & 0xFF == 127 : high == 0 && low == 1
    }

    /// The canonical text: an IPv4 address (IPv4-mapped included) dotted; any other as RFC 5952 §4
    /// writes it (lower case, no leading zeros, the longest run of two or more zero groups as `::`,
    /// the first such run when two are as long), in hex to the end even where §5 would allow a
    /// dotted tail (`64:ff9b::c000:221`), so that an address has one text. `init(_:)` reads it back
    /// as the same address.
    public var text: String {
        if isIPv4 {
            return (0..<4).map { String(low >> (24 - 8 * $0) & 0xFF) }.joined(separator: ".")
        }
        let groups = (0..<8).map { UInt16(truncatingIfNeeded: ($0 < 4 ? high : low) >> (48 - 16 * ($0 % 4))) }
        var run = 0..<0
        var start = 0
        while start < 8 {
            var end = start
            while end < 8 && groups[end] == 0 { end += 1 }
            if end - start >= 2 && end - start > run.count { run = start..<end }
            start = end + 1
        }
        let hex = groups.map { String($0, radix: 16) }
        if run.isEmpty { return hex.joined(separator: ":") }
        return hex[..<run.lowerBound].joined(separator: ":") + "::" + hex[run.upperBound...].joined(separator: ":")
    }

    /// `text`, so that the address reads as itself in messages.
    public var description: String { text }

    /// This address with every bit after its first `bits` (0 to 128) cleared: the first address of
    /// the block of that prefix length that holds it.
    package func keeping(bits: Int) -> IPAddress {
        // Shifts of 64 or more give 0: Swift's shifts do not wrap their count.
        let highMask = ~UInt64(0) << (64 - min(bits, 64))
        let lowMask = ~UInt64(0) << (128 - max(bits, 64))
        return IPAddress(high: high & highMask, low: low & lowMask)
    }

    /// The bits `::ffff:0:0` that make an IPv4 address an IPv6 one.
    private static let mappedPrefix: UInt64 = 0xFFFF_0000_0000

    /// A dotted quad's 32 bits, or nil.
    private static func ipv4(_ text: ArraySlice<UInt8>) -> UInt32? {
        let octets = text.split(separator: UInt8(ascii: "."), maxSplits: 4, omittingEmptySubsequences: false)
        guard octets.count == 4 else { return nil }
        var value: UInt32 = 0
        for octet in octets {
            guard (1...3).contains(octet.count), octet.first != UInt8(ascii: "0") || octet.count == 1 else {
                return nil
            }
            var number: UInt32 = 0
            for byte in octet {
                guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
                number = number * 10 + UInt32(byte - UInt8(ascii: "0"))
            }
            guard number <= 255 else { return nil }
            value = value << 8 | number
        }
        return value
    }

    /// The 128 bits of an RFC 4291 §2.2 text, or nil.
    private static func ipv6(_ text: ArraySlice<UInt8>) -> (UInt64, UInt64)? {
        var groups: [UInt16]
        if let double = text.indices.dropLast().first(where: { text[$0] == colon && text[$0 + 1] == colon }) {
            // `::` stands for one or more zero groups.
            guard let head = Self.groups(text[..<double], endsAddress: false),
                let tail = Self.groups(text[(double + 2)...], endsAddress: true), head.count + tail.count <= 7
            else { return nil }
            groups = head + Array(repeating: 0, count: 8 - head.count - tail.count) + tail
        } else {
            guard let all = Self.groups(text, endsAddress: true), all.count == 8 else { return nil }
            groups = all
        }
        let high = groups[..<4].reduce(UInt64(0)) { $0 << 16 | UInt64($1) }
        let low = groups[4...].reduce(UInt64(0)) { $0 << 16 | UInt64($1) }
        return (high, low)
    }

    /// The 16-bit groups of colon-separated `text` (none when it is empty), or nil when a group is
    /// empty or not 1 to 4 hex digits. When `endsAddress`, the last group may be a dotted quad (two
    /// groups).
    private static func groups(_ text: ArraySlice<UInt8>, endsAddress: Bool) -> [UInt16]? {
        if text.isEmpty { return [] }
        let pieces = text.split(separator: colon, maxSplits: 8, omittingEmptySubsequences: false)
        var groups: [UInt16] = []
        for (position, piece) in pieces.enumerated() {
            if endsAddress && position == pieces.count - 1 && piece.contains(UInt8(ascii: ".")) {
                guard let quad = ipv4(piece) else { return nil }
                groups += [UInt16(quad >> 16), UInt16(truncatingIfNeeded: quad)]
                continue
            }
            guard (1...4).contains(piece.count) else { return nil }
            var group: UInt16 = 0
            for byte in piece {
                guard let digit = Grammar.hexValue(byte) else { return nil }
                group = group << 4 | UInt16(digit)
            }
            groups.append(group)
        }
        return groups
    }

    /// The separator of IPv6 groups.
    private static let colon = UInt8(ascii: ":")
}
