import EventLoops
import Foundation
import MetEngine

@testable import MetHTTP

/// One `HTTPLoop` on a thread of its own, as `HTTPServer` runs each, serving connections the test
/// hands it over a `socketpair` instead of accepted ones. Its listening socket is a Unix socket
/// with an autobound abstract address that nobody connects to. Call `shutDown()` once at the end.
final class LoopHarness {
    let loop: HTTPLoop

    /// - Parameter idleTimeout: the loop's `--idle-timeout`, in seconds.
    init(responder: any Responder, idleTimeout: Double = 30) throws {
        let listener = try Self.listeningSocket()
        // Host and port are the listening socket's business, which the loop is given.
        let configuration = HTTPServerConfiguration(
            host: "unused", port: 0, loops: 1, idleTimeout: idleTimeout, limits: RequestLimits())
        do {
            loop = try HTTPLoop(
                eventLoop: EventLoop(name: "http-loop-test"), listeningDescriptor: listener,
                configuration: configuration, budget: ConnectionBudget(limit: 16), responder: responder,
                logger: Logger(level: .error, sink: { _ in }))
        } catch {
            close(listener)
            throw error
        }
        loop.eventLoop.start()
    }

    /// A new connection to the loop. `before` runs on the client first, while the loop does not
    /// have the server end yet: what it sends is all there for the loop's first read. The server
    /// end's send buffer is 64 KiB (the kernel doubles it), so a 1 MiB response backs up.
    func connect(before: (TestClient) -> Void = { _ in }) throws -> TestClient {
        var ends: [CInt] = [0, 0]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue), 0, &ends) == 0 else {
            throw HTTPServerError("socketpair")
        }
        let server = ends[1]
        var sendBuffer: CInt = 65_536
        setsockopt(server, SOL_SOCKET, SO_SNDBUF, &sendBuffer, socklen_t(MemoryLayout<CInt>.size))
        _ = fcntl(server, F_SETFL, fcntl(server, F_GETFL) | O_NONBLOCK)
        let client = TestClient(descriptor: ends[0])
        before(client)
        loop.execute { [loop] in loop.adopt(descriptor: server) }
        return client
    }

    /// Returns once the loop has run a job posted now: whatever it was doing (a read callback and
    /// every request it handled there) is finished.
    func barrier() async {
        await withCheckedContinuation { continuation in loop.execute { continuation.resume() } }
    }

    /// Closes the loop's connections and ends its thread.
    func shutDown() {
        loop.execute { [loop] in loop.close() }
        loop.eventLoop.waitUntilStopped()
    }

    private static func listeningSocket() throws -> CInt {
        let descriptor = socket(
            AF_UNIX, Int32(SOCK_STREAM.rawValue | SOCK_NONBLOCK.rawValue | SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw HTTPServerError("socket") }
        // Only the address family: the kernel picks a fresh abstract address (unix(7), autobind).
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, socklen_t(MemoryLayout<sa_family_t>.size))
            }
        }
        guard bound == 0, listen(descriptor, 1) == 0 else {
            close(descriptor)
            throw HTTPServerError("bind")
        }
        return descriptor
    }
}
