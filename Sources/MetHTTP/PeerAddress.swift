import Glibc

/// Where a connection's client is, as far as the purge routes care: on this machine or not.
enum PeerAddress {
    /// Whether the peer of the connected socket `descriptor` is on this machine: an IPv4 loopback
    /// address (127.0.0.0/8), IPv6 `::1`, an IPv4-mapped loopback (`::ffff:127.x.y.z`), or the other
    /// end of a Unix-domain socket. False when the address cannot be read. One `getpeername` call:
    /// made once per connection, when it is accepted.
    static func isLoopback(_ descriptor: CInt) -> Bool {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let result = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getpeername(descriptor, $0, &length) }
        }
        guard result == 0 else { return false }
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
