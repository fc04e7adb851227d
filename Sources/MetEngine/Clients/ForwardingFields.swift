import HTTPGrammar

/// Who a proxy says its client was: one node of `X-Forwarded-For` or one `for=` of `Forwarded`.
public enum ForwardedNode: Sendable, Equatable {
    /// The client's address (its port, if the proxy gave one, dropped).
    case address(IPAddress)
    /// `unknown`: the proxy did not know its client, or would not say.
    case unknown
    /// An obfuscated identifier (RFC 7239 §6.3) as sent, `_` included: the same client each time
    /// for the proxy that made it, and nothing more.
    case obfuscated(String)
}

/// What one proxy said in one element of a `Forwarded` field; the parameters other than `for` and
/// `proto` are not kept.
public struct ForwardedElement: Sendable, Equatable {
    /// The `for=` node, nil when the element has none.
    public var node: ForwardedNode?
    /// The `proto=` scheme in lower case, nil when the element has none.
    public var proto: String?
}

/// The fields a reverse proxy adds to say whom it forwards for. Each parser takes every line of its
/// field in order (several lines form one list) and answers nil when the field has no element.
///
/// `X-Forwarded-For` is read element by element: a proxy appends its client to what the client
/// sent, so the elements on the left are the client's own words, which may be anything; only the
/// ones a trusted proxy wrote, on the right, are read for who the client is, and an element that
/// is no node there stands for a proxy that did not say (as `unknown` does). `Forwarded` is read
/// whole and strictly (a quoted string may hide commas, so a broken element leaves no way to find
/// the next): malformed anywhere, it is not believed at all.
public enum ForwardingFields {
    /// The most elements read of a field: many more hops than any real chain of proxies, few
    /// enough to bound the work a request can ask for. `X-Forwarded-For` keeps its last ones (the
    /// hops nearest this server); a `Forwarded` with more is malformed.
    public static let maxElements = 64

    /// `X-Forwarded-For`: elements separated by commas (spaces and tabs around them and empty
    /// elements allowed, RFC 9110 §5.6.1), the client first and the latest proxy's client last; of
    /// them the last `maxElements`, each read as a node or nil when it is none. A node is an IPv4
    /// address, optionally with `:port`; an IPv6 address, bare or in brackets, with `:port` only
    /// after the brackets (`[2001:db8::1]:443`); or `unknown` in any case. A port is 1 to 5 digits.
    public static func xForwardedFor(_ lines: [String]) -> [ForwardedNode?]? {
        var elements: [ArraySlice<UInt8>] = []
        for line in lines {
            let bytes = Array(line.utf8)
            var start = 0
            while start <= bytes.count {
                let end = bytes[start...].firstIndex(of: comma) ?? bytes.count
                let element = trimmed(bytes[start..<end])
                start = end + 1
                if !element.isEmpty { elements.append(element) }
            }
        }
        guard !elements.isEmpty else { return nil }
        return elements.suffix(maxElements).map(xForwardedForNode)
    }

    /// `Forwarded` (RFC 7239 §4): elements separated by commas, each `[pair] *(";" [pair])`, a pair
    /// being `token "=" (token / quoted-string)` with no spaces around `;` or `=`. Parameter names
    /// are case-insensitive; a parameter twice in one element makes the field malformed; parameters
    /// other than `for` and `proto` are allowed and ignored. `for` must be a node (RFC 7239 §6): an
    /// IPv4 address, a quoted `"[IPv6]"`, `unknown` or an obfuscated `_identifier`, with an optional
    /// port (digits or `_identifier`) that is dropped. `proto` must be a URI scheme.
    public static func forwarded(_ lines: [String]) -> [ForwardedElement]? {
        var elements: [ForwardedElement] = []
        for line in lines {
            let bytes = Array(line.utf8)
            var index = 0
            while true {
                index = bytes[index...].firstIndex { $0 != space && $0 != tab } ?? bytes.count
                if index == bytes.count { break }
                if bytes[index] == comma {
                    index += 1
                    continue
                }
                guard elements.count < maxElements, let element = forwardedElement(bytes, at: &index) else {
                    return nil
                }
                elements.append(element)
                index = bytes[index...].firstIndex { $0 != space && $0 != tab } ?? bytes.count
                if index == bytes.count { break }
                guard bytes[index] == comma else { return nil }
                index += 1
            }
        }
        return elements.isEmpty ? nil : elements
    }

    /// One `X-Forwarded-For` element, already trimmed and not empty.
    private static func xForwardedForNode(_ element: ArraySlice<UInt8>) -> ForwardedNode? {
        if Grammar.equalsIgnoringCase(element, "unknown".utf8) { return .unknown }
        if element.first == UInt8(ascii: "[") {
            guard let close = element.firstIndex(of: UInt8(ascii: "]")) else { return nil }
            let inside = element[(element.startIndex + 1)..<close]
            guard inside.contains(colon), let address = IPAddress(utf8: inside) else { return nil }
            let rest = element[(close + 1)...]
            guard rest.isEmpty || rest.first == colon && isDecimalPort(rest.dropFirst()) else { return nil }
            return .address(address)
        }
        // An IPv6 address has two colons at least; an IPv4 address with a port has one.
        let colons = element.count { $0 == colon }
        if colons >= 2 { return IPAddress(utf8: element).map(ForwardedNode.address) }
        let host = element.prefix { $0 != colon }
        guard colons == 0 || isDecimalPort(element[(host.endIndex + 1)...]) else { return nil }
        return IPAddress(utf8: host).map(ForwardedNode.address)
    }

    /// One `Forwarded` element starting at `index`, which it leaves after the element; nil when it
    /// is malformed or empty.
    private static func forwardedElement(_ bytes: [UInt8], at index: inout Int) -> ForwardedElement? {
        let start = index
        var element = ForwardedElement()
        var names: Set<String> = []
        while true {
            if index < bytes.count && Grammar.isTokenByte(bytes[index]) {
                let nameStart = index
                while index < bytes.count && Grammar.isTokenByte(bytes[index]) { index += 1 }
                // Token bytes are ASCII: lower-casing them is ASCII case folding.
                let name = String(decoding: bytes[nameStart..<index], as: UTF8.self).lowercased()
                guard index < bytes.count, bytes[index] == UInt8(ascii: "=") else { return nil }
                index += 1
                guard let value = forwardedValue(bytes, at: &index), names.insert(name).inserted else { return nil }
                switch name {
                case "for":
                    guard let node = forwardedNode(value) else { return nil }
                    element.node = node
                case "proto":
                    guard isScheme(value) else { return nil }
                    element.proto = String(decoding: value, as: UTF8.self).lowercased()
                default:
                    break
                }
            }
            guard index < bytes.count, bytes[index] == UInt8(ascii: ";") else { break }
            index += 1
        }
        return index > start ? element : nil
    }

    /// A token, or a quoted-string unescaped (RFC 9110 §5.6.4), starting at `index`, which it
    /// leaves after the value.
    private static func forwardedValue(_ bytes: [UInt8], at index: inout Int) -> [UInt8]? {
        guard index < bytes.count else { return nil }
        guard bytes[index] == quote else {
            let start = index
            while index < bytes.count && Grammar.isTokenByte(bytes[index]) { index += 1 }
            return index > start ? Array(bytes[start..<index]) : nil
        }
        var value: [UInt8] = []
        index += 1
        while index < bytes.count {
            var byte = bytes[index]
            index += 1
            if byte == quote { return value }
            if byte == UInt8(ascii: "\\") {
                // quoted-pair: HTAB, SP, VCHAR or obs-text after the backslash.
                guard index < bytes.count, bytes[index] == tab || bytes[index] >= space && bytes[index] != 0x7F else {
                    return nil
                }
                byte = bytes[index]
                index += 1
            } else {
                // qdtext: HTAB, SP, VCHAR except `"` and `\`, obs-text.
                guard byte == tab || byte >= space && byte != 0x7F else { return nil }
            }
            value.append(byte)
        }
        return nil
    }

    /// A `for=` value: `nodename [":" node-port]` (RFC 7239 §6).
    private static func forwardedNode(_ value: [UInt8]) -> ForwardedNode? {
        if value.first == UInt8(ascii: "[") {
            guard let close = value.firstIndex(of: UInt8(ascii: "]")) else { return nil }
            let inside = value[1..<close]
            guard inside.contains(colon), let address = IPAddress(utf8: inside) else { return nil }
            let rest = value[(close + 1)...]
            guard rest.isEmpty || rest.first == colon && isNodePort(rest.dropFirst()) else { return nil }
            return .address(address)
        }
        let name = value.prefix { $0 != colon }
        guard name.endIndex == value.endIndex || isNodePort(value[(name.endIndex + 1)...]) else { return nil }
        if Grammar.equalsIgnoringCase(name, "unknown".utf8) { return .unknown }
        if isObfuscated(name) { return .obfuscated(String(decoding: name, as: UTF8.self)) }
        return IPAddress(utf8: name).map(ForwardedNode.address)
    }

    /// `port / obfport` (RFC 7239 §6): 1 to 5 digits, or an obfuscated identifier.
    private static func isNodePort(_ text: ArraySlice<UInt8>) -> Bool {
        isDecimalPort(text) || isObfuscated(text)
    }

    /// 1 to 5 digits.
    private static func isDecimalPort(_ text: ArraySlice<UInt8>) -> Bool {
        (1...5).contains(text.count) && text.allSatisfy(isDigit)
    }

    /// `"_" 1*(ALPHA / DIGIT / "." / "_" / "-")` (RFC 7239 §6.3).
    private static func isObfuscated(_ text: ArraySlice<UInt8>) -> Bool {
        text.count >= 2 && text.first == UInt8(ascii: "_")
            && text.allSatisfy { isLetter($0) || isDigit($0) || "._-".utf8.contains($0) }
    }

    /// A URI scheme (RFC 3986 §3.1): `ALPHA *(ALPHA / DIGIT / "+" / "-" / ".")`.
    private static func isScheme(_ text: [UInt8]) -> Bool {
        guard let first = text.first, isLetter(first) else { return false }
        return text.allSatisfy { isLetter($0) || isDigit($0) || "+-.".utf8.contains($0) }
    }

    /// ASCII `ALPHA`, either case.
    private static func isLetter(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte | 0x20)
    }

    /// ASCII `DIGIT`.
    private static func isDigit(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
    }

    /// `bytes` without leading and trailing spaces and tabs (RFC 9110 `OWS`).
    private static func trimmed(_ bytes: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
        let start = bytes.firstIndex { $0 != space && $0 != tab } ?? bytes.endIndex
        let end = bytes.lastIndex { $0 != space && $0 != tab }.map { $0 + 1 } ?? start
        return bytes[start..<end]
    }

    /// The separator of list elements.
    private static let comma = UInt8(ascii: ",")
    /// What separates a port from its node, and the groups of an IPv6 address.
    private static let colon = UInt8(ascii: ":")
    /// What opens and closes a quoted-string.
    private static let quote = UInt8(ascii: "\"")
    /// A space: optional white space (`OWS`) around list elements, and text in a quoted-string.
    private static let space = UInt8(ascii: " ")
    /// A horizontal tab: the other byte of `OWS`, also text in a quoted-string.
    private static let tab = UInt8(ascii: "\t")
}
