/// A block of addresses in CIDR notation (`10.0.0.0/8`, `2001:db8::/32`, or one address). An IPv4
/// block is held as the IPv4-mapped IPv6 block it is, so it holds IPv4 addresses however a socket
/// reported them.
public struct AddressRange: Sendable, Equatable, CustomStringConvertible {
    /// The block's first address: its bits past `prefixLength` are zero.
    package let first: IPAddress
    /// How many leading bits of the 128 every address in the block shares: 96 more than the
    /// written length for an IPv4 block.
    package let prefixLength: Int

    /// An IPv4 address (`10.1.2.3`), an IPv4 block (`10.0.0.0/8`, the length from 0 to 32), an IPv6
    /// address (`::1`) or an IPv6 block (`2001:db8::/32`, the length from 0 to 128), with spaces or
    /// tabs around it. The bits past the length must be zero: `10.1.2.3/8` is refused, naming
    /// `10.0.0.0/8` in the reason, as a mistyped block would otherwise trust more or less than
    /// meant. Returns the one-line reason when `text` is not such a block.
    public static func parse(_ text: String) -> Result<AddressRange, AddressRangeError> {
        let trimmed = Substring(text).trimmingSpaces()
        let quoted = "'\(shown(trimmed))'"
        func refuse(_ why: String) -> Result<AddressRange, AddressRangeError> {
            .failure(AddressRangeError("\(quoted) \(why)"))
        }
        guard !trimmed.isEmpty else { return .failure(AddressRangeError("an empty address range")) }
        let parts = trimmed.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        guard let address = IPAddress(parts[0]) else {
            let hint =
                if trimmed.hasPrefix("[") {
                    "write an IPv6 address without brackets"
                } else if trimmed.contains("%") {
                    "a zone ID (%…) is not part of an address"
                } else {
                    "expected an address or a block such as 10.0.0.0/8 or 2001:db8::/32"
                }
            return refuse("is not an address range: \(hint)")
        }
        let isIPv4Text = !parts[0].contains(":")
        let width = isIPv4Text ? 32 : 128
        var length = width
        if parts.count == 2 {
            let digits = parts[1]
            guard (1...3).contains(digits.count), digits.allSatisfy(\.isASCIIDigit),
                digits.first != "0" || digits.count == 1, let number = Int(digits), number <= width
            else { return refuse("has no valid prefix length: after '/' a number from 0 to \(width)") }
            length = number
        }
        let range = AddressRange(prefixLength: length + 128 - width, containing: address)
        guard range.first == address else {
            return refuse("has bits set past /\(length): did you mean \(range)?")
        }
        return .success(range)
    }

    /// `text` for a one-line message: characters other than visible ASCII and spaces escaped.
    private static func shown(_ text: Substring) -> String {
        text.unicodeScalars.map { (0x20..<0x7F).contains($0.value) ? String($0) : $0.escaped(asASCII: true) }.joined()
    }

    /// The block of `prefixLength` leading bits (0 to 128) that holds `address`.
    private init(prefixLength: Int, containing address: IPAddress) {
        self.first = address.keeping(bits: prefixLength)
        self.prefixLength = prefixLength
    }

    /// Whether `address` is in the block (an IPv4 address, mapped or not, in an IPv4 block).
    public func contains(_ address: IPAddress) -> Bool {
        address.keeping(bits: prefixLength) == first
    }

    /// The block as `parse(_:)` reads it back: `10.0.0.0/8`, `2001:db8::/32`, and a block of one
    /// address as that address (`127.0.0.1`, `::1`).
    public var description: String {
        let length = first.isIPv4 ? prefixLength - 96 : prefixLength
        return prefixLength == 128 ? first.text : "\(first.text)/\(length)"
    }
}

/// Why an address range, or a list of them, was refused.
public struct AddressRangeError: Error, Equatable {
    /// One line saying what is wrong, naming the offending text.
    public let reason: String

    /// The error for `reason`.
    package init(_ reason: String) { self.reason = reason }
}
