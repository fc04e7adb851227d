import MetEngine

/// Which browser pages on other origins may read this server's answers (`--cors-origin`): any
/// (`*`), or those of a list of origins, each echoed to a request that comes from it.
public enum CORSPolicy: Sendable, Equatable {
    /// `Access-Control-Allow-Origin: *` on every response.
    case any
    /// Serialized origins (RFC 6454 §6.2: lower-case scheme and host, the port only when it is not
    /// the scheme's default), at most `maxOrigins`, without repeats.
    case origins([String])

    /// The most origins a list may name.
    public static let maxOrigins = 64

    /// `*`, or origins separated by commas (and optional spaces): `https://app.example,
    /// http://localhost:5173`. Each is a scheme, `://`, a host (a name, an IPv4 address or a
    /// bracketed IPv6 one) and an optional port, and nothing else: a path, even `/`, a query, user
    /// information or a wildcard would never equal a browser's `Origin` and is refused. Scheme and
    /// host are lower-cased and a default port (80 for http, 443 for https) dropped, as browsers
    /// send them. Returns the reason when `text` is not such a list.
    public static func parse(_ text: String) -> Result<CORSPolicy, CORSPolicyError> {
        let trimmed = Substring(text).trimmingSpaces()
        if trimmed == "*" { return .success(.any) }
        var origins: [String] = []
        for element in trimmed.split(separator: ",", omittingEmptySubsequences: false) {
            let candidate = String(element.trimmingSpaces())
            if candidate.isEmpty { return .failure(CORSPolicyError("an empty origin in the list")) }
            if candidate == "*" { return .failure(CORSPolicyError("'*' cannot be combined with origins")) }
            switch serialize(candidate) {
            case .success(let origin):
                if !origins.contains(origin) { origins.append(origin) }
            case .failure(let error):
                return .failure(error)
            }
        }
        guard origins.count <= maxOrigins else {
            return .failure(CORSPolicyError("more than \(maxOrigins) origins"))
        }
        return .success(.origins(origins))
    }

    /// What `--help` and the start-up line show: `*` or the origins joined with commas.
    public var description: String {
        switch self {
        case .any: "*"
        case .origins(let origins): origins.joined(separator: ",")
        }
    }

    /// One origin, serialized; the reason otherwise.
    private static func serialize(_ text: String) -> Result<String, CORSPolicyError> {
        func refuse(_ why: String) -> Result<String, CORSPolicyError> {
            .failure(CORSPolicyError("'\(text)' is not an origin: \(why)"))
        }
        guard text.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value < 0x7F }) else {
            return refuse("only visible ASCII characters, such as https://app.example")
        }
        guard let separator = text.range(of: "://") else {
            return refuse("expected scheme://host[:port], such as https://app.example")
        }
        let scheme = text[..<separator.lowerBound].lowercased()
        guard let first = scheme.first, first.isLetter,
            scheme.allSatisfy({ $0.isLetter || $0.isNumber || "+-.".contains($0) })
        else { return refuse("the scheme must be letters, digits, +, - or . (such as https)") }
        let rest = text[separator.upperBound...]
        if let slash = rest.firstIndex(where: { "/?#".contains($0) }) {
            return refuse("an origin has no path, query or fragment; drop '\(rest[slash...])'")
        }
        if rest.contains("@") { return refuse("an origin has no user information") }
        var host = Substring(rest)
        var port: Substring?
        if host.hasPrefix("[") {
            guard let close = host.firstIndex(of: "]") else { return refuse("an IPv6 address lacks its ']'") }
            let address = host[host.index(after: host.startIndex)..<close]
            guard !address.isEmpty, address.allSatisfy({ $0.isHexDigit || $0 == ":" || $0 == "." }) else {
                return refuse("'\(host[...close])' is not an IPv6 address")
            }
            let after = host[host.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { return refuse("expected ':port' after the IPv6 address") }
                port = after.dropFirst()
            }
            host = host[...close]
        } else if let colon = host.firstIndex(of: ":") {
            port = host[host.index(after: colon)...]
            host = host[..<colon]
        }
        guard !host.isEmpty else { return refuse("the host is missing") }
        guard host.hasPrefix("[") || host.allSatisfy({ $0.isLetter || $0.isNumber || "-.".contains($0) }) else {
            return refuse("the host may hold letters, digits, - and . only")
        }
        var serialized = "\(scheme)://\(host.lowercased())"
        if let port {
            guard !port.isEmpty, port.count <= 5, port.allSatisfy(\.isASCIIDigit), let number = Int(port),
                (1...65_535).contains(number)
            else { return refuse("the port must be a number from 1 to 65535") }
            let isDefault = (scheme == "http" && number == 80) || (scheme == "https" && number == 443)
            if !isDefault { serialized += ":\(number)" }
        }
        return .success(serialized)
    }
}

/// Why a `--cors-origin` value was refused.
public struct CORSPolicyError: Error, Equatable {
    public let reason: String

    init(_ reason: String) { self.reason = reason }
}
