import CLibevent
import Foundation

/// Errors from setting up the HTTP layer; each names the C call that failed.
public struct HTTPServerError: Error, CustomStringConvertible, Sendable {
    public let description: String
    /// Whether the port is held by another process (or another server of ours).
    let isAddressInUse: Bool

    init(_ function: String, _ detail: String? = nil) {
        let reason = detail ?? String(cString: strerror(errno))
        description = "\(function) failed: \(reason)"
        isAddressInUse = false
    }

    private init(description: String, isAddressInUse: Bool) {
        self.description = description
        self.isAddressInUse = isAddressInUse
    }

    /// The port is taken: only the loops of one server share a port.
    static let addressInUse = HTTPServerError(
        description: "the port is already in use by another process", isAddressInUse: true)
}

/// A bound, listening, non-blocking TCP socket, one of a `SO_REUSEPORT` group: each event loop
/// accepts on its own socket of the group, and the kernel spreads new connections over them by
/// their addresses, so no loop gets more than its share because it happened to wake first.
///
/// The group shares its port with nobody else. `SO_REUSEPORT` lets any socket of the same user
/// with the option join a group, so a second server started on the same port would silently take
/// a share of the first one's connections. Two guards, for a non-zero port:
/// - before binding, a probe socket is bound to the same address without `SO_REUSEPORT`
///   (`SO_REUSEADDR` only, so connections in TIME_WAIT do not count): the kernel refuses it with
///   `EADDRINUSE` while anyone listens there, and the bind fails with `addressInUse`;
/// - after binding, `/proc/net/tcp` (or `tcp6`) must list no listening socket on the port and a
///   conflicting address (the same, or a wildcard on either side) but the group's own (by inode).
///   This closes the race of two servers whose probes both passed before either bound: the one
///   that bound second always sees the first and gives up (both may, never neither). Connections
///   queued on a socket that gives up are reset. Without a readable `/proc`, only the probe holds.
struct ListeningSocket: Sendable {
    /// The descriptor; owned by this value until `close()`.
    let descriptor: CInt
    /// The host as given, for the "listening on" line.
    let host: String
    /// The bound port (the real one when 0 was asked for).
    let port: Int

    /// One resolved address to bind.
    private struct Address {
        var storage = sockaddr_storage()
        var length: socklen_t
        var family: CInt

        /// The port, host byte order (sin_port and sin6_port both sit at offset 2).
        var port: Int {
            withUnsafeBytes(of: storage) { Int(UInt16(bigEndian: $0.load(fromByteOffset: 2, as: UInt16.self))) }
        }

        /// The same address with `port`.
        func with(port: Int) -> Address {
            var copy = self
            withUnsafeMutableBytes(of: &copy.storage) {
                $0.storeBytes(of: UInt16(port).bigEndian, toByteOffset: 2, as: UInt16.self)
            }
            return copy
        }
    }

    /// `count` sockets on the same address and port (the port the first one got, when `port` is
    /// 0), each listening with a backlog of 1024, sharing the port with no other process (see the
    /// type's comment). The caller owns them all. `host` is an IPv4 or IPv6 literal, or a name
    /// such as `localhost`: its addresses are tried in order, and the first that binds is used.
    static func bindGroup(host: String, port: Int, count: Int) throws -> [ListeningSocket] {
        var lastError = HTTPServerError("bind(\(host):\(port))", "no usable address")
        for address in try resolve(host, port) {
            do {
                if port != 0 { try probe(address, host: host) }
                var group = [try bind(address, host: host)]
                do {
                    while group.count < count {
                        group.append(try bind(address.with(port: group[0].port), host: host))
                    }
                    if port != 0 { try confirmSoleOwner(of: group, family: address.family) }
                } catch {
                    for socket in group { socket.close() }
                    throw error
                }
                return group
            } catch let error as HTTPServerError {
                if error.isAddressInUse { throw error }
                lastError = error
            }
        }
        throw lastError
    }

    /// The addresses of `host` for a passive TCP socket on `port`, in getaddrinfo's order.
    private static func resolve(_ host: String, _ port: Int) throws -> [Address] {
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
        var addresses: [Address] = []
        var candidate: UnsafeMutablePointer<addrinfo>? = list
        while let info = candidate {
            candidate = info.pointee.ai_next
            guard let source = info.pointee.ai_addr, Int(info.pointee.ai_addrlen) <= MemoryLayout<sockaddr_storage>.size
            else { continue }
            var address = Address(length: info.pointee.ai_addrlen, family: info.pointee.ai_family)
            withUnsafeMutableBytes(of: &address.storage) {
                $0.copyMemory(from: UnsafeRawBufferPointer(start: source, count: Int(info.pointee.ai_addrlen)))
            }
            addresses.append(address)
        }
        return addresses
    }

    /// Binds a throw-away socket to `address` without `SO_REUSEPORT`: `EADDRINUSE` means another
    /// socket listens there (another process, or another server of ours), and throws
    /// `addressInUse`. Other failures throw as `bind` would, so the next address is tried.
    private static func probe(_ address: Address, host: String) throws {
        let fd = socket(address.family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw HTTPServerError("socket") }
        defer { Glibc.close(fd) }
        var one: CInt = 1
        guard setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<CInt>.size)) == 0 else {
            throw HTTPServerError("setsockopt(SO_REUSEADDR)")
        }
        var storage = address.storage
        let bound = withUnsafePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.bind(fd, $0, address.length) }
        }
        if bound == 0 { return }
        if errno == EADDRINUSE { throw HTTPServerError.addressInUse }
        throw HTTPServerError("bind(\(host):\(address.port))")
    }

    /// Binds `address` with `SO_REUSEPORT` and listens with a backlog of 1024.
    private static func bind(_ address: Address, host: String) throws -> ListeningSocket {
        let fd = socket(address.family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw HTTPServerError("socket") }
        var one: CInt = 1
        var storage = address.storage
        guard setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<CInt>.size)) == 0,
            setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, socklen_t(MemoryLayout<CInt>.size)) == 0,
            withUnsafePointer(
                to: &storage,
                {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.bind(fd, $0, address.length) }
                }) == 0
        else {
            let error = HTTPServerError("bind(\(host):\(address.port))")
            Glibc.close(fd)
            throw error
        }
        // Accepted sockets inherit TCP_NODELAY on Linux. Without it, a body larger than one
        // write leaves its last segment waiting for the client's delayed ACK: 40 ms a response.
        guard setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<CInt>.size)) == 0,
            listen(fd, 1024) == 0, evutil_make_socket_nonblocking(fd) == 0
        else {
            let error = HTTPServerError("listen(\(host):\(address.port))")
            Glibc.close(fd)
            throw error
        }
        do {
            return ListeningSocket(descriptor: fd, host: host, port: try boundPort(fd))
        } catch {
            Glibc.close(fd)
            throw error
        }
    }

    /// Throws `addressInUse` when the kernel's table of TCP sockets of `family` lists a socket
    /// listening on the group's port, at an address that conflicts with the group's (the same,
    /// or a wildcard on either side), that is not one of the group's (compared by inode). An
    /// unreadable table passes.
    private static func confirmSoleOwner(of group: [ListeningSocket], family: CInt) throws {
        let path = family == AF_INET6 ? "/proc/net/tcp6" : "/proc/net/tcp"
        guard let table = try? String(contentsOfFile: path, encoding: .utf8) else { return }
        var ours = Set<UInt64>()
        for socket in group {
            var status = stat()
            guard fstat(socket.descriptor, &status) == 0 else { throw HTTPServerError("fstat") }
            ours.insert(UInt64(status.st_ino))
        }
        let port = String(group[0].port, radix: 16, uppercase: true)
        let padded = String(repeating: "0", count: max(0, 4 - port.count)) + port
        // Listening entries on the port: (address in the table's hex, inode).
        let listening = table.split(separator: "\n").dropFirst().compactMap { line -> (Substring, UInt64)? in
            let fields = line.split(separator: " ")
            guard fields.count > 9, fields[3] == "0A" else { return nil }
            let local = fields[1].split(separator: ":")
            guard local.count == 2, local[1] == padded, let inode = UInt64(fields[9]) else { return nil }
            return (local[0], inode)
        }
        let isWildcard = { (address: Substring) in address.allSatisfy { $0 == "0" } }
        let addresses = Set(listening.filter { ours.contains($0.1) }.map(\.0))
        for (address, inode) in listening where !ours.contains(inode) {
            if addresses.contains(address) || isWildcard(address) || addresses.contains(where: isWildcard) {
                throw HTTPServerError.addressInUse
            }
        }
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
