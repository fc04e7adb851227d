import HTTPGrammar
import MetEngine

/// The check on a record's `objectURL` before it goes into a `Location`: the value comes from the
/// upstream (or a fixture, or a poisoned cache), so it is parsed strictly and written out again,
/// never passed through.
enum MetWebPage {
    /// The longest `objectURL` considered, in bytes.
    static let maxLength = 2_048

    /// `url` re-serialized when it is an absolute `http(s)` URL on `metmuseum.org` or one of its
    /// subdomains, else nil. The grammar is RFC 3986's, narrowed:
    /// - printable ASCII only (no spaces, controls, non-ASCII or IDN in Unicode form) and none of
    ///   `"<>\^`{|}`;
    /// - an authority of `host[:port]`: no userinfo (`@`), no IP literal, no percent-encoding;
    ///   host labels of letters, digits and inner hyphens (1–63 bytes each, no empty label, so no
    ///   trailing dot); a port of 1–5 digits from 1 to 65535;
    /// - then nothing, or a path, query and fragment whose `%` escapes are well formed.
    ///
    /// Scheme and host come out in lower case, the port without leading zeros, an empty path as `/`.
    static func normalized(_ url: String) -> String? {
        let bytes = Array(url.utf8)
        guard bytes.count <= maxLength, bytes.allSatisfy(isAllowed) else { return nil }
        let lower = url.lowercased()
        guard let scheme = ["https", "http"].first(where: { lower.hasPrefix($0 + "://") }) else { return nil }
        let rest = bytes.dropFirst(scheme.utf8.count + 3)
        let authority = rest.prefix { $0 != UInt8(ascii: "/") && $0 != UInt8(ascii: "?") && $0 != UInt8(ascii: "#") }
        let tail = rest.dropFirst(authority.count)
        let parts = authority.split(separator: UInt8(ascii: ":"), maxSplits: 1, omittingEmptySubsequences: false)
        guard let host = parts.first.flatMap(metHost) else { return nil }
        var serialized = scheme + "://" + host
        if parts.count == 2 {
            guard let port = port(parts[1]) else { return nil }
            serialized += ":\(port)"
        }
        guard hasWellFormedEscapes(tail) else { return nil }
        if tail.first != UInt8(ascii: "/") { serialized += "/" }
        serialized += String(decoding: tail, as: UTF8.self)
        // The `/` added before a bare query or fragment can take a URL of `maxLength` bytes past
        // it, and what comes out must be accepted as it is when read again.
        return serialized.utf8.count <= maxLength ? serialized : nil
    }

    /// Printable ASCII other than the characters RFC 3986 never allows in a URL.
    private static func isAllowed(_ byte: UInt8) -> Bool {
        (0x21...0x7E).contains(byte) && !Array(#""<>\^`{|}"#.utf8).contains(byte)
    }

    /// The host in lower case when it is `metmuseum.org` or a subdomain of it, made of LDH labels.
    private static func metHost(_ bytes: ArraySlice<UInt8>) -> String? {
        let host = String(decoding: bytes, as: UTF8.self).lowercased()
        guard host.utf8.count <= 253, host == "metmuseum.org" || host.hasSuffix(".metmuseum.org") else { return nil }
        let labels = host.split(separator: ".", omittingEmptySubsequences: false)
        let valid = labels.allSatisfy { label in
            (1...63).contains(label.utf8.count) && label.first != "-" && label.last != "-"
                && label.utf8.allSatisfy { ($0 >= 0x61 && $0 <= 0x7A) || ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x2D }
        }
        return valid ? host : nil
    }

    /// A port: 1–5 ASCII digits, from 1 to 65535.
    private static func port(_ bytes: ArraySlice<UInt8>) -> Int? {
        guard (1...5).contains(bytes.count), bytes.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
            let port = Int(String(decoding: bytes, as: UTF8.self)), (1...65_535).contains(port)
        else { return nil }
        return port
    }

    /// Whether every `%` is followed by two hexadecimal digits.
    private static func hasWellFormedEscapes(_ bytes: ArraySlice<UInt8>) -> Bool {
        var index = bytes.startIndex
        while index < bytes.endIndex {
            if bytes[index] == UInt8(ascii: "%") {
                guard index + 2 < bytes.endIndex, Grammar.hexValue(bytes[index + 1]) != nil,
                    Grammar.hexValue(bytes[index + 2]) != nil
                else { return false }
                index += 3
            } else {
                index += 1
            }
        }
        return true
    }
}
