import Foundation

/// Sockets on 127.0.0.1 for test servers and for ports that must stay taken.
public enum Loopback {
    /// A TCP socket bound to 127.0.0.1 on a port the OS picks (and listening, when asked), and
    /// that port; the caller closes it.
    public static func bind(listening: Bool) throws -> (descriptor: CInt, port: Int) {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.bind(descriptor, $0, length) == 0 && (!listening || listen(descriptor, 64) == 0)
                    && getsockname(descriptor, $0, &length) == 0
            }
        }
        guard descriptor >= 0, bound else {
            if descriptor >= 0 { Glibc.close(descriptor) }
            throw ProcessFailure("could not bind a loopback socket")
        }
        return (descriptor, Int(UInt16(bigEndian: address.sin_port)))
    }
}
