import Glibc

/// Where a connection's client is: on this machine or not (for the purge routes), and its
/// address in words (for the access log).
struct PeerAddress {
    /// Whether the peer is on this machine: an IPv4 loopback address (127.0.0.0/8), IPv6 `::1`,
    /// an IPv4-mapped loopback (`::ffff:127.x.y.z`), or the other end of a Unix-domain socket.
    /// False when the address cannot be read.
    let isLoopback: Bool
    /// `127.0.0.1`, `::1`, `unix`, or `-` when the address cannot be read.
    let text: String

    /// The peer of the connected socket `descriptor`. One `getpeername` call: made once per
    /// connection, when it is accepted.
    init(of descriptor: CInt) {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let result = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getpeername(descriptor, $0, &length) }
        }
        guard result == 0 else {
            isLoopback = false
            text = "-"
            return
        }
        isLoopback = Self.isLoopback(storage)
        text = Self.text(of: storage)
    }

    /// The numeric address (`inet_ntop`), `unix` for a Unix-domain socket.
    private static func text(of storage: sockaddr_storage) -> String {
        var storage = storage
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
        let family = CInt(storage.ss_family)
        let converted: UnsafePointer<CChar>? = withUnsafeMutableBytes(of: &storage) { raw in
            switch family {
            case AF_INET:
                let offset = MemoryLayout<sockaddr_in>.offset(of: \.sin_addr)!
                return inet_ntop(AF_INET, raw.baseAddress! + offset, &buffer, socklen_t(buffer.count))
            case AF_INET6:
                let offset = MemoryLayout<sockaddr_in6>.offset(of: \.sin6_addr)!
                return inet_ntop(AF_INET6, raw.baseAddress! + offset, &buffer, socklen_t(buffer.count))
            default:
                return nil
            }
        }
        if family == AF_UNIX { return "unix" }
        guard converted != nil else { return "-" }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    private static func isLoopback(_ storage: sockaddr_storage) -> Bool {
        let family = CInt(storage.ss_family)
        return withUnsafeBytes(of: storage) { raw -> Bool in
            switch family {
            case AF_UNIX:
                return true
            case AF_INET:
                // sin_addr, in network order, follows the family and the port.
                return raw[MemoryLayout<sockaddr_in>.offset(of: \.sin_addr)!] == 127
            case AF_INET6:
                let offset = MemoryLayout<sockaddr_in6>.offset(of: \.sin6_addr)!
                let address = Array(raw[offset..<offset + 16])
                let isIPv6Loopback = address[0..<15].allSatisfy { $0 == 0 } && address[15] == 1
                let isMappedLoopback =
                    address[0..<10].allSatisfy { $0 == 0 } && address[10] == 0xFF && address[11] == 0xFF
                    && address[12] == 127
                return isIPv6Loopback || isMappedLoopback
            default:
                return false
            }
        }
    }
}
