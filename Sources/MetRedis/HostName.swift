import Foundation

/// Host names for the Redis link, resolved off its loop (`getaddrinfo` blocks).
enum HostName {
    /// Whether `host` is an IPv4 or IPv6 address rather than a name.
    static func isNumeric(_ host: String) -> Bool {
        var bytes = in6_addr()
        return inet_pton(AF_INET, host, &bytes) == 1 || inet_pton(AF_INET6, host, &bytes) == 1
    }

    /// The first IPv4 address `host` resolves to (else its first IPv6 one), as text; nil when it
    /// resolves to none. IPv4 first: a Redis bound to 127.0.0.1 is the usual case, and `localhost`
    /// often lists ::1 first. Blocks.
    static func resolve(_ host: String) -> String? {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var results: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, nil, &hints, &results) == 0, var first = results else { return nil }
        defer { freeaddrinfo(results) }
        var candidate: UnsafeMutablePointer<addrinfo>? = results
        while let entry = candidate {
            if entry.pointee.ai_family == AF_INET {
                first = entry
                break
            }
            candidate = entry.pointee.ai_next
        }
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        let family = first.pointee.ai_family
        let written: UnsafePointer<CChar>?
        switch family {
        case AF_INET:
            var raw = first.pointee.ai_addr.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee.sin_addr }
            written = inet_ntop(AF_INET, &raw, &text, socklen_t(text.count))
        case AF_INET6:
            var raw = first.pointee.ai_addr.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) {
                $0.pointee.sin6_addr
            }
            written = inet_ntop(AF_INET6, &raw, &text, socklen_t(text.count))
        default:
            written = nil
        }
        guard written != nil else { return nil }
        return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
