import CLibevent
import Foundation

/// Errors from setting up the HTTP layer; each names the C call that failed.
public struct HTTPServerError: Error, CustomStringConvertible, Sendable {
    public let description: String

    init(_ function: String, _ detail: String? = nil) {
        let reason = detail ?? String(cString: strerror(errno))
        description = "\(function) failed: \(reason)"
    }
}

/// A bound, listening, non-blocking TCP socket, one of a `SO_REUSEPORT` group: each event loop
/// accepts on its own socket of the group, and the kernel spreads new connections over them by
/// their addresses, so no loop gets more than its share because it happened to wake first.
struct ListeningSocket: Sendable {
    /// The descriptor; owned by this value until `close()`.
    let descriptor: CInt
    /// The host as given, for the "listening on" line.
    let host: String
    /// The bound port (the real one when 0 was asked for).
    let port: Int

    /// `count` sockets on the same address and port (the port the first one got, when `port` is
    /// 0), each listening with a backlog of 1024. The caller owns them all.
    static func bindGroup(host: String, port: Int, count: Int) throws -> [ListeningSocket] {
        var group = [try bind(host: host, port: port)]
        do {
            while group.count < count {
                group.append(try bind(host: host, port: group[0].port))
            }
        } catch {
            for socket in group { socket.close() }
            throw error
        }
        return group
    }

    /// Resolves `host` (an IPv4 or IPv6 literal, or a name such as `localhost`), binds the first
    /// address that works with `SO_REUSEPORT`, and listens with a backlog of 1024.
    private static func bind(host: String, port: Int) throws -> ListeningSocket {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV
        var list: UnsafeMutablePointer<addrinfo>?
        let literal = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        let status = getaddrinfo(literal, String(port), &hints, &list)
        guard status == 0, let list else {
            throw HTTPServerError("getaddrinfo(\(host))", String(cString: gai_strerror(status)))
        }
        defer { freeaddrinfo(list) }
        var lastError = HTTPServerError("bind(\(host):\(port))", "no usable address")
        var candidate: UnsafeMutablePointer<addrinfo>? = list
        while let info = candidate {
            candidate = info.pointee.ai_next
            let fd = socket(info.pointee.ai_family, info.pointee.ai_socktype | Int32(SOCK_CLOEXEC.rawValue), 0)
            guard fd >= 0 else {
                lastError = HTTPServerError("socket")
                continue
            }
            var one: CInt = 1
            guard setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<CInt>.size)) == 0,
                setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, socklen_t(MemoryLayout<CInt>.size)) == 0,
                Glibc.bind(fd, info.pointee.ai_addr, info.pointee.ai_addrlen) == 0
            else {
                lastError = HTTPServerError("bind(\(host):\(port))")
                Glibc.close(fd)
                continue
            }
            // Accepted sockets inherit TCP_NODELAY on Linux. Without it, a body larger than one
            // write leaves its last segment waiting for the client's delayed ACK: 40 ms a response.
            guard setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<CInt>.size)) == 0,
                listen(fd, 1024) == 0, evutil_make_socket_nonblocking(fd) == 0
            else {
                lastError = HTTPServerError("listen(\(host):\(port))")
                Glibc.close(fd)
                continue
            }
            return ListeningSocket(descriptor: fd, host: host, port: try boundPort(fd))
        }
        throw lastError
    }

    func close() {
        _ = Glibc.close(descriptor)
    }

    private static func boundPort(_ fd: CInt) throws -> Int {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let result = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard result == 0 else { throw HTTPServerError("getsockname") }
        switch Int32(storage.ss_family) {
        case AF_INET, AF_INET6:
            // sin_port and sin6_port both sit at offset 2, in network byte order.
            return withUnsafeBytes(of: &storage) { Int(UInt16(bigEndian: $0.load(fromByteOffset: 2, as: UInt16.self))) }
        default:
            throw HTTPServerError("getsockname", "unexpected address family")
        }
    }
}
