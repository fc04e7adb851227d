import Foundation
import MetEngine

/// What the HTTP layer needs to know; built from the server's configuration by the executables.
public struct HTTPServerConfiguration: Sendable {
    /// Address to bind (IPv4/IPv6 literal or host name).
    public var host: String
    /// Port to bind; 0 for any free port.
    public var port: Int
    /// Event loops, each on its own thread.
    public var loops: Int
    /// Seconds an idle connection, or a client silent in the middle of its request, is kept.
    public var idleTimeout: Double
    /// Seconds a client has to send one whole request (head and body) from its first byte, however
    /// steadily the bytes trickle in; then 408 and close.
    public var readTimeout: Double
    /// The most client connections open at once, across loops; at the cap the loops stop accepting
    /// until one closes.
    public var maxConnections: Int
    /// The limits the core enforces with problem documents. The wire layer enforces the body limit
    /// itself (413 before buffering) and sets its head limits above the core's, as a backstop.
    public var limits: RequestLimits
    /// Where access lines go; nil: none are made.
    public var accessLog: AccessLog?

    /// - Parameters:
    ///   - readTimeout: seconds; default 10.
    ///   - maxConnections: nil for `defaultMaxConnections()`.
    public init(
        host: String, port: Int, loops: Int, idleTimeout: Double, limits: RequestLimits,
        readTimeout: Double = 10, maxConnections: Int? = nil
    ) {
        self.host = host
        self.port = port
        self.loops = loops
        self.idleTimeout = idleTimeout
        self.limits = limits
        self.readTimeout = readTimeout
        self.maxConnections = maxConnections ?? Self.defaultMaxConnections()
    }

    /// Descriptors kept back from client connections: standard streams, listening sockets, each
    /// loop's epoll and wake-up descriptors, upstream sockets, the data directory's files.
    public static let reservedDescriptors = 128

    /// The process's soft descriptor limit (`RLIMIT_NOFILE`) less `reservedDescriptors`, at least
    /// 16 and at most 1,048,576 (the limit may be unlimited).
    public static func defaultMaxConnections() -> Int {
        var limit = rlimit()
        guard getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0 else {
            return 1_024 - reservedDescriptors
        }
        let soft = Int(clamping: limit.rlim_cur)  // RLIM_INFINITY is the largest value: clamped below
        return min(1_048_576, max(16, soft - reservedDescriptors))
    }
}
