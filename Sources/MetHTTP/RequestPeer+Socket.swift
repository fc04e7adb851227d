import Glibc
import MetEngine

extension RequestPeer {
    /// The peer of the connected socket `descriptor`: its IP address (an IPv4-mapped IPv6 one is
    /// the IPv4 address), a Unix-domain socket, or unknown when it cannot be read. One
    /// `getpeername` call: made once per connection, when it is accepted.
    init(of descriptor: CInt) {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let result = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getpeername(descriptor, $0, &length) }
        }
        guard result == 0 else {
            self = .unknown
            return
        }
        let family = CInt(storage.ss_family)
        let address = withUnsafeBytes(of: storage) { raw -> IPAddress? in
            switch family {
            case AF_INET:
                let offset = MemoryLayout<sockaddr_in>.offset(of: \.sin_addr)!
                return IPAddress(bytes: raw[offset..<offset + 4])
            case AF_INET6:
                let offset = MemoryLayout<sockaddr_in6>.offset(of: \.sin6_addr)!
                return IPAddress(bytes: raw[offset..<offset + 16])
            default:
                return nil
            }
        }
        if let address {
            self.init(address: address)
        } else {
            self = family == AF_UNIX ? .unixSocket : .unknown
        }
    }
}
