import EventLoops
import Foundation
import MetEngine

/// The HTTP server: `loops` libevent loops on their own threads, each accepting on its own
/// socket of one `SO_REUSEPORT` group, all answering through one `Responder`.
///
/// Lifecycle: `start()` once, then `shutdown(gracePeriod:)` once, both from the same ordinary
/// thread (not a cooperative-pool thread: both block while the loops start or drain).
public final class HTTPServer: Sendable {
    /// Where the server ended up listening.
    public struct Address: Sendable {
        public let host: String
        public let port: Int

        /// `http://HOST:PORT`, with IPv6 literals bracketed.
        public var url: String {
            let shown = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
            return "http://\(shown):\(port)"
        }
    }

    private struct State {
        var loops: [HTTPLoop] = []
    }

    private let configuration: HTTPServerConfiguration
    private let responder: any Responder
    private let logger: Logger
    private let state = Locked(State())

    public init(configuration: HTTPServerConfiguration, responder: any Responder, logger: Logger) {
        self.configuration = configuration
        self.responder = responder
        self.logger = logger
    }

    /// Binds the socket and starts every loop; returns once all of them accept connections.
    /// Throws (naming the failing call) if binding or any loop's set-up fails.
    public func start() throws -> Address {
        let sockets = try ListeningSocket.bindGroup(
            host: configuration.host, port: configuration.port, count: max(1, configuration.loops))
        let budget = ConnectionBudget(limit: configuration.maxConnections)
        for (index, socket) in sockets.enumerated() {
            do {
                try startLoop(index, descriptor: socket.descriptor, budget: budget)
            } catch {
                for unused in sockets[(index + 1)...] { unused.close() }
                shutdown(gracePeriod: 0)
                throw error
            }
        }
        return Address(host: sockets[0].host, port: sockets[0].port)
    }

    private func startLoop(_ index: Int, descriptor: CInt, budget: ConnectionBudget) throws {
        let loop: HTTPLoop
        do {
            let eventLoop = try EventLoop(name: "http-loop-\(index)", coalescesChanges: true)
            loop = try HTTPLoop(
                eventLoop: eventLoop, listeningDescriptor: descriptor, configuration: configuration, budget: budget,
                responder: responder, logger: logger)
        } catch {
            close(descriptor)
            throw error
        }
        loop.eventLoop.start()
        state.withLock { $0.loops.append(loop) }
    }

    /// The event loops that serve requests, once started: for the parts of the core that answer on
    /// them (the Redis tier's links of each loop).
    public var eventLoops: [EventLoop] { state.withLock { $0.loops.map(\.eventLoop) } }

    /// Stops accepting, lets in-flight requests finish for up to `gracePeriod` seconds, answers
    /// any still pending with 503 `shutting_down`, then closes every connection and ends the loops.
    /// Blocks until the loop threads have exited.
    public func shutdown(gracePeriod: Double) {
        let loops = state.withLock { state in
            defer { state.loops = [] }
            return state.loops
        }
        for loop in loops { loop.execute { loop.stopAccepting() } }
        let deadline = Date().addingTimeInterval(gracePeriod)
        while Date() < deadline, loops.contains(where: { $0.outstanding.load(ordering: .relaxed) > 0 }) {
            usleep(10_000)
        }
        for loop in loops { loop.execute { loop.abandonPending() } }
        // Give the last replies (including the 503s just queued) a moment to reach their sockets.
        let flushDeadline = Date().addingTimeInterval(1)
        while Date() < flushDeadline, loops.contains(where: { $0.outstanding.load(ordering: .relaxed) > 0 }) {
            usleep(5_000)
        }
        for loop in loops { loop.execute { loop.close() } }
        for loop in loops { loop.eventLoop.waitUntilStopped() }
    }
}
