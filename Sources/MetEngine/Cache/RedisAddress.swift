/// Where the shared tier's Redis is (`--redis`): `redis://[user:password@]host[:port][/db]` or
/// `unix:///path/to/redis.sock[?db=N]`, read strictly. The password is kept for the connection and
/// never shown: `description` leaves it out.
public struct RedisAddress: Sendable, Equatable, CustomStringConvertible {
    public enum Endpoint: Sendable, Equatable {
        /// A host name or IP address (IPv6 without its brackets) and a TCP port.
        case tcp(host: String, port: Int)
        /// A Unix socket's path.
        case unix(path: String)
    }

    public var endpoint: Endpoint
    /// For Redis 6 ACLs (`AUTH user password`); nil with a password alone (`AUTH password`).
    public var user: String?
    public var password: String?
    /// The database number (`SELECT`), 0 by default.
    public var database: Int

    /// Reads `text`; nil when it is not one of the two forms, or names a port or database out of
    /// range.
    public init?(_ text: String) {
        database = 0
        if text.hasPrefix("unix://") {
            var rest = Substring(text.dropFirst("unix://".count))
            if let query = rest.firstIndex(of: "?") {
                let parameter = rest[rest.index(after: query)...]
                guard parameter.hasPrefix("db="), let number = Self.database(parameter.dropFirst(3)) else {
                    return nil
                }
                database = number
                rest = rest[..<query]
            }
            guard rest.hasPrefix("/"), rest.count > 1, !rest.contains("\0") else { return nil }
            endpoint = .unix(path: String(rest))
            return
        }
        guard text.hasPrefix("redis://") else { return nil }
        var rest = Substring(text.dropFirst("redis://".count))
        if let at = rest.lastIndex(of: "@") {
            let credentials = rest[..<at]
            rest = rest[rest.index(after: at)...]
            guard let colon = credentials.firstIndex(of: ":") else { return nil }
            let user = credentials[..<colon]
            guard
                let password = RequestTarget.percentDecode(
                    credentials[credentials.index(after: colon)...], plusIsSpace: false),
                !password.isEmpty
            else { return nil }
            self.user = user.isEmpty ? nil : RequestTarget.percentDecode(user, plusIsSpace: false)
            guard user.isEmpty || self.user != nil else { return nil }
            self.password = password
        }
        if let slash = rest.firstIndex(of: "/") {
            let path = rest[rest.index(after: slash)...]
            if !path.isEmpty {
                guard let number = Self.database(path) else { return nil }
                database = number
            }
            rest = rest[..<slash]
        }
        var host = rest
        var port = 6379
        if rest.hasPrefix("[") {
            guard let close = rest.firstIndex(of: "]") else { return nil }
            host = rest[rest.index(after: rest.startIndex)..<close]
            let after = rest[rest.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":"), let number = Int(after.dropFirst()) else { return nil }
                port = number
            }
        } else if let colon = rest.lastIndex(of: ":") {
            host = rest[..<colon]
            guard let number = Int(rest[rest.index(after: colon)...]) else { return nil }
            port = number
        }
        guard (1...65_535).contains(port), !host.isEmpty,
            host.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || ".-:".contains($0)) })
        else { return nil }
        endpoint = .tcp(host: String(host), port: port)
    }

    /// Decimal 0…15, Redis's default number of databases.
    private static func database(_ text: Substring) -> Int? {
        guard let number = Int(text), (0...15).contains(number), text.allSatisfy(\.isNumber) else { return nil }
        return number
    }

    /// The address without the password, for `/health` and the log.
    public var description: String {
        let suffix = database == 0 ? "" : "/\(database)"
        switch endpoint {
        case .tcp(let host, let port):
            let name = host.contains(":") ? "[\(host)]" : host
            let credentials = password == nil ? "" : "\(user ?? ""):***@"
            return "redis://\(credentials)\(name):\(port)\(suffix)"
        case .unix(let path):
            return "unix://\(path)" + (database == 0 ? "" : "?db=\(database)")
        }
    }
}
