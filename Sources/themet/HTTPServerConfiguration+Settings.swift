import MetCore
import MetHTTP

extension HTTPServerConfiguration {
    /// The HTTP layer's part of the server's configuration.
    init(_ settings: ServerConfiguration.HTTPSettings) {
        self.init(
            host: settings.host, port: settings.port, loops: settings.loops, idleTimeout: settings.idleTimeout,
            limits: settings.limits, readTimeout: settings.readTimeout, maxConnections: settings.maxConnections)
    }
}
