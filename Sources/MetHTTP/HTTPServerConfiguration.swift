import MetCore

/// What the HTTP layer needs to know; built from `ServerConfiguration` by the executables.
public struct HTTPServerConfiguration: Sendable {
    /// Address to bind (IPv4/IPv6 literal or host name).
    public var host: String
    /// Port to bind; 0 for any free port.
    public var port: Int
    /// Event loops, each on its own thread.
    public var loops: Int
    /// Seconds an idle connection (or a client slow to send its request) is kept.
    public var idleTimeout: Double
    /// The limits the core enforces with problem documents. libevent's own hard limits are set
    /// above them, as a backstop that answers with libevent's plain error page.
    public var limits: RequestLimits

    public init(host: String, port: Int, loops: Int, idleTimeout: Double, limits: RequestLimits) {
        self.host = host
        self.port = port
        self.loops = loops
        self.idleTimeout = idleTimeout
        self.limits = limits
    }

    /// The HTTP settings of a server configuration.
    public init(_ configuration: ServerConfiguration) {
        self.init(
            host: configuration.host, port: configuration.port, loops: configuration.loops,
            idleTimeout: configuration.idleTimeout, limits: configuration.limits)
    }
}
