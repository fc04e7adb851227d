import Foundation
import HTTPGrammar

/// The `uri-host [":" port]` grammar of a `Host` field value and of the authority in an
/// absolute-form or authority-form request target (RFC 9112 §3.2, RFC 3986 §3.2.2–3.2.3).
/// Userinfo (`user@`) is never valid here.
enum Authority {
    /// Whether `bytes` is `uri-host [":" port]`: a reg-name (possibly empty, as RFC 9112 §3.2
    /// allows for Host), an IPv4 address (a reg-name as far as syntax goes), or an IPv6 or IPvFuture
    /// literal in brackets; the port, when there is a colon, is at most 5 digits and at most 65535
    /// (an empty port is RFC 3986 syntax and accepted). `requiresPort`: authority-form (CONNECT)
    /// needs `host:port` with a non-empty host and port.
    static func isValid(_ bytes: some Collection<UInt8>, requiresPort: Bool = false) -> Bool {
        let bytes = Array(bytes)
        let host: ArraySlice<UInt8>
        let rest: ArraySlice<UInt8>
        if bytes.first == UInt8(ascii: "[") {
            guard let close = bytes.firstIndex(of: UInt8(ascii: "]")), isIPLiteral(bytes[1..<close]) else {
                return false
            }
            host = bytes[...close]
            rest = bytes[(close + 1)...]
        } else {
            let colon = bytes.firstIndex(of: UInt8(ascii: ":")) ?? bytes.endIndex
            host = bytes[..<colon]
            rest = bytes[colon...]
            guard isRegName(host) else { return false }
        }
        if rest.isEmpty { return !requiresPort }
        guard rest.first == UInt8(ascii: ":") else { return false }
        let port = rest.dropFirst()
        guard port.count <= 5, port.allSatisfy(FieldLine.isDigit) else { return false }
        if requiresPort && (port.isEmpty || host.isEmpty) { return false }
        return port.reduce(0) { $0 * 10 + Int($1 - UInt8(ascii: "0")) } <= 65_535
    }

    /// RFC 3986 `reg-name`: unreserved, sub-delims and well-formed percent-escapes.
    private static func isRegName(_ bytes: ArraySlice<UInt8>) -> Bool {
        var index = bytes.startIndex
        while index < bytes.endIndex {
            let byte = bytes[index]
            if byte == UInt8(ascii: "%") {
                guard index + 2 < bytes.endIndex, Grammar.hexValue(bytes[index + 1]) != nil,
                    Grammar.hexValue(bytes[index + 2]) != nil
                else { return false }
                index += 3
                continue
            }
            guard Grammar.isUnreserved(byte) || isSubDelimiter(byte) else { return false }
            index += 1
        }
        return true
    }

    /// The inside of `[...]`: an IPv6 address (checked by `inet_pton`) or an IPvFuture
    /// (`v` hex-digits `.` then unreserved, sub-delims or `:`).
    private static func isIPLiteral(_ bytes: ArraySlice<UInt8>) -> Bool {
        if let first = bytes.first, first | 0x20 == UInt8(ascii: "v") {
            let afterV = bytes.dropFirst()
            guard let dot = afterV.firstIndex(of: UInt8(ascii: ".")), dot > afterV.startIndex,
                afterV[..<dot].allSatisfy({ Grammar.hexValue($0) != nil })
            else { return false }
            let tail = afterV[(dot + 1)...]
            return !tail.isEmpty
                && tail.allSatisfy { Grammar.isUnreserved($0) || isSubDelimiter($0) || $0 == UInt8(ascii: ":") }
        }
        // inet_pton alone would take no more than 45 bytes of hex digits, colons and dots anyway.
        guard bytes.count <= 45, bytes.allSatisfy({ Grammar.hexValue($0) != nil || $0 == 0x3A || $0 == 0x2E })
        else { return false }
        var address = in6_addr()
        return String(decoding: bytes, as: UTF8.self).withCString { inet_pton(AF_INET6, $0, &address) } == 1
    }

    private static func isSubDelimiter(_ byte: UInt8) -> Bool { "!$&'()*+,;=".utf8.contains(byte) }
}
