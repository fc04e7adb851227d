import EventLoops
import Foundation
import MetEngine
import TestKit
import Testing

@testable import MetHTTP

/// The connection cap (`--max-connections`): `ConnectionBudget` grants at most `limit` slots and
/// counts one log line per episode of clients waiting; `ConnectionAcceptor` at the cap stops
/// accepting, asks its loop to shed and accepts the waiting client once a slot is released; a
/// server at its cap leaves a new client unanswered (no 503: it waits in the kernel's backlog)
/// until a connection closes, and sheds connections idle, or slow to send their request, for
/// over a second to let it in. `LoopHarness` fixes its cap at 16 and hands connections over with
/// `adopt`, which closes one beyond the cap at once; the accepting path is driven over TCP on
/// 127.0.0.1, through a lone acceptor or an `HTTPServer` whose cap the test sets. Every wait is
/// bounded, by a count of polls or a read timeout.
@Suite("The connection cap and shedding", .timeLimit(.minutes(5)))
struct SheddingTests {
    /// A `ConnectionAcceptor` alone on a loop of its own, listening on 127.0.0.1: it keeps the
    /// descriptors it is given to serve, and its shedding closes nothing but counts the calls.
    /// Call `shutDown()` once at the end.
    private final class LoneAcceptor: Sendable {
        let loop: EventLoop
        let budget: ConnectionBudget
        let acceptor: ConnectionAcceptor
        let port: Int
        let log = MemoryLog()
        private let servedDescriptors = Locked<[CInt]>([])
        /// The served descriptors not closed yet.
        private let openDescriptors = Locked<Set<CInt>>([])
        private let shedCalls = Locked(0)

        init(limit: Int) throws {
            let (listener, port) = try Loopback.bind(listening: true)
            // As the server's own: the acceptor accepts until the socket has nobody waiting.
            _ = fcntl(listener, F_SETFL, fcntl(listener, F_GETFL) | O_NONBLOCK)
            self.port = port
            budget = ConnectionBudget(limit: limit)
            do {
                loop = try EventLoop(name: "acceptor-test")
                acceptor = try ConnectionAcceptor(
                    loop: loop, listeningDescriptor: listener, budget: budget, logger: log.logger(level: .warning),
                    serve: { [servedDescriptors, openDescriptors] descriptor in
                        servedDescriptors.withLock { $0.append(descriptor) }
                        openDescriptors.withLock { _ = $0.insert(descriptor) }
                    },
                    shed: { [shedCalls] in
                        shedCalls.withLock { $0 += 1 }
                        return 0
                    })
            } catch {
                close(listener)
                throw error
            }
            loop.start()
        }

        /// The descriptors accepted so far, in order.
        var served: [CInt] { servedDescriptors.withLock { $0 } }
        /// How many times the acceptor asked to shed.
        var sheds: Int { shedCalls.withLock { $0 } }

        /// What a loop does when a served connection closes: closes it and gives its slot back.
        func closeServed(_ descriptor: CInt) {
            guard openDescriptors.withLock({ $0.remove(descriptor) }) != nil else { return }
            close(descriptor)
            budget.release()
        }

        func shutDown() {
            loop.execute { [loop, acceptor] in
                acceptor.stop()
                loop.stop()
            }
            loop.waitUntilStopped()
            for descriptor in openDescriptors.withLock({ $0 }) { close(descriptor) }
        }
    }

    /// An `HTTPServer` on 127.0.0.1 (a port the OS picks) with a cap of its own, logging warnings
    /// to memory.
    private struct CappedServer {
        let server: HTTPServer
        let port: Int
        let log: MemoryLog
    }

    /// Runs `body` with a server of `maxConnections` answering with `responder`, then shuts it
    /// down. Idle and read timeouts are 30 s, far beyond any wait here: a connection the server
    /// closes is closed by the cap, not by them.
    private static func withServer(
        maxConnections: Int, loops: Int = 1, responder: TestResponder, _ body: (CappedServer) async throws -> Void
    ) async throws {
        let log = MemoryLog()
        let configuration = HTTPServerConfiguration(
            host: "127.0.0.1", port: 0, loops: loops, idleTimeout: 30, limits: RequestLimits(), readTimeout: 30,
            maxConnections: maxConnections)
        let server = HTTPServer(configuration: configuration, responder: responder, logger: log.logger(level: .warning))
        // Both block while the loops start or stop: on a thread of their own.
        let address = try await BlockingIO.onThread { Result { try server.start() } }.get()
        do {
            try await body(CappedServer(server: server, port: address.port, log: log))
        } catch {
            responder.releaseSlow.fire()
            await BlockingIO.onThread { server.shutdown(gracePeriod: 0) }
            throw error
        }
        responder.releaseSlow.fire()
        await BlockingIO.onThread { server.shutdown(gracePeriod: 0) }
    }

    /// A TCP connection to 127.0.0.1:`port`. The kernel completes it from the listening socket's
    /// backlog whether or not the server accepts it.
    private static func connect(to port: Int) throws -> TestClient {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw ProcessFailure("socket failed") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else {
            close(descriptor)
            throw ProcessFailure("could not connect to 127.0.0.1:\(port)")
        }
        return TestClient(descriptor: descriptor)
    }

    /// Whether `condition` holds within `polls` looks 10 ms apart.
    private static func eventually(polls: Int = 500, _ condition: () -> Bool) async throws -> Bool {
        for _ in 0..<polls {
            if condition() { return true }
            try await Task.sleep(for: .milliseconds(10))
        }
        return condition()
    }

    private static func get(_ target: String) -> String {
        "GET \(target) HTTP/1.1\r\nHost: x\r\n\r\n"
    }

    /// The warning a loop logs when a client first waits at a cap of `limit`, `closed` connections
    /// shed at once.
    private static func atCapWarning(_ limit: Int, closed: Int? = nil) -> String {
        let start = "warning: \(limit) connections open (--max-connections); not accepting until some close"
        guard let closed else { return start }
        return start + " (closed \(closed) idle or slow to send a request)"
    }

    // MARK: The budget

    @Test func theBudgetGrantsNoMoreSlotsThanItsLimitAndGrantsAReleasedOneAgain() throws {
        let lone = try LoneAcceptor(limit: 3)
        defer { lone.shutDown() }
        let budget = lone.budget
        #expect((0..<3).map { _ in budget.acquire(for: lone.acceptor) } == [true, true, true])
        #expect(!budget.acquire(for: lone.acceptor))
        budget.release()
        #expect(budget.acquire(for: lone.acceptor))
        #expect(!budget.acquire(for: lone.acceptor))
    }

    @Test func onlyTheFirstClientWaitingAtTheCapIsWorthALogLineUntilHalfTheSlotsAreFree() throws {
        let lone = try LoneAcceptor(limit: 4)
        defer { lone.shutDown() }
        let budget = lone.budget
        for _ in 0..<4 { _ = budget.acquire(for: lone.acceptor) }
        #expect(budget.clientWaits())
        #expect(!budget.clientWaits())
        // Three of four open: still the same episode.
        budget.release()
        #expect(!budget.clientWaits())
        // Two of four, half the cap: the episode is over; the next wait starts another.
        budget.release()
        #expect(budget.clientWaits())
        #expect(!budget.clientWaits())
    }

    // MARK: The acceptor

    @Test func atTheCapTheAcceptorStopsAcceptingAsksToShedAndTakesTheWaitingClientOnceASlotIsFree()
        async throws
    {
        let lone = try LoneAcceptor(limit: 1)
        defer { lone.shutDown() }
        let first = try Self.connect(to: lone.port)
        #expect(try await Self.eventually { lone.served.count == 1 })
        let waiting = try Self.connect(to: lone.port)
        // The cap is reached with a client waiting: a shed is asked for, and the episode logged once.
        // (The line is logged after the shed returns.)
        #expect(try await Self.eventually { !lone.log.lines.isEmpty })
        #expect(lone.sheds >= 1)
        #expect(lone.log.lines == [Self.atCapWarning(1, closed: 0)])
        // The shed closed nothing: it is asked again while accepting stays stopped.
        #expect(try await Self.eventually { lone.sheds >= 2 })
        #expect(lone.served.count == 1)
        #expect(lone.log.lines.count == 1)

        lone.closeServed(lone.served[0])
        #expect(try await Self.eventually { lone.served.count == 2 })
        // The descriptor served is the waiting client's: what it sends arrives there.
        waiting.write("hello")
        let accepted = lone.served.count == 2 ? lone.served[1] : -1
        var byte: UInt8 = 0
        #expect(try await Self.eventually { recv(accepted, &byte, 1, Int32(MSG_DONTWAIT)) == 1 })
        #expect(byte == UInt8(ascii: "h"))
        withExtendedLifetime(first) {}
    }

    // MARK: The server

    @Test func aClientAtTheCapWaitsUnansweredUntilAConnectionClosesAndIsThenServed() async throws {
        let responder = TestResponder()
        // Two loops: the cap is the server's, whichever loop each connection lands on.
        try await Self.withServer(maxConnections: 2, loops: 2, responder: responder) { server in
            // Two connections waiting for their answer: neither idle nor slow to send, so never shed.
            let first = try Self.connect(to: server.port)
            first.write(Self.get("/slow"))
            let second = try Self.connect(to: server.port)
            second.write(Self.get("/slow"))
            #expect(try await Self.eventually { responder.targets.count == 2 })

            let third = try Self.connect(to: server.port)
            third.write(Self.get("/third"))
            #expect(try await Self.eventually { server.log.lines.contains(Self.atCapWarning(2, closed: 0)) })
            // Not accepted: its request was not read, and no answer (no 503 either) was written.
            #expect(responder.targets == ["/slow", "/slow"])
            #expect(third.pendingBytes == 0)

            // The first client leaves: its slot lets the third in.
            shutdown(first.descriptor, Int32(SHUT_RDWR))
            let replies = await third.replies(1)
            #expect(replies.map(\.status) == [200])
            #expect(replies.first?.body == Array("/third".utf8))
            // The one still waiting for its answer was left alone, and gets it.
            responder.releaseSlow.fire()
            #expect(await second.replies(1).first?.body == Array("slow".utf8))
        }
    }

    @Test func anIdleConnectionIsShedToLetAWaitingClientIn() async throws {
        let responder = TestResponder()
        try await Self.withServer(maxConnections: 1, responder: responder) { server in
            let idle = try Self.connect(to: server.port)
            idle.write(Self.get("/first"))
            #expect(await idle.replies(1).first?.body == Array("/first".utf8))

            // Kept alive and idle: once it has been for a second, it gives its slot up.
            let waiting = try Self.connect(to: server.port)
            waiting.write(Self.get("/waiting"))
            let replies = await waiting.replies(1)
            #expect(replies.map(\.status) == [200])
            #expect(replies.first?.body == Array("/waiting".utf8))
            #expect(await idle.next() == .end)
            #expect(responder.targets == ["/first", "/waiting"])
            #expect(server.log.lines.count == 1)
            #expect(server.log.lines.first?.hasPrefix(Self.atCapWarning(1)) == true)
        }
    }

    @Test func aConnectionSlowToSendItsRequestIsShedToLetAWaitingClientIn() async throws {
        let responder = TestResponder()
        try await Self.withServer(maxConnections: 1, responder: responder) { server in
            // Half a head, and no more: a slot held by a request that does not come.
            let slow = try Self.connect(to: server.port)
            slow.write("GET /never HTTP/1.1\r\nHost: x\r\n")

            let waiting = try Self.connect(to: server.port)
            waiting.write(Self.get("/waiting"))
            let replies = await waiting.replies(1)
            #expect(replies.first?.body == Array("/waiting".utf8))
            // Closed without an answer (the read timeout's 408 is 30 s away), its request never read.
            #expect(await slow.next() == .end)
            #expect(responder.targets == ["/waiting"])
        }
    }

    // MARK: Adopted connections

    @Test func aConnectionAdoptedBeyondTheCapIsClosedAtOnceAndOneClosingMakesRoom() async throws {
        let responder = TestResponder()
        let harness = try LoopHarness(responder: responder)
        defer { harness.shutDown() }
        // `LoopHarness` gives its loop a budget of 16.
        var open: [TestClient] = []
        for index in 0..<16 {
            open.append(try harness.connect { $0.write(Self.get("/\(index)")) })
        }
        for client in open {
            #expect(await client.replies(1).count == 1)
        }

        // Closed without a word. Waited for by polls of a second (up to 60), not by one 10 s read:
        // under ThreadSanitizer on two cores, that one read once ended without seeing the close, and
        // 30 polls were once not enough either.
        let refused = try harness.connect()
        #expect(await refused.hangsUp(withinPolls: 60))
        let next = await refused.next()
        #expect(next == .end, "\(next)")
        #expect(responder.targets.count == 16)

        // One leaves; once the loop has closed its end, a new connection is served. Its closing is
        // not visible from here: new connections are tried until one is (those refused meanwhile
        // are closed at once, so each try is short). Up to 10 s: on a busy machine (the whole suite
        // under ThreadSanitizer on two cores) the loop may take longer than the 2 s allowed before.
        shutdown(open[0].descriptor, Int32(SHUT_RDWR))
        var served: TestClient.Reply?
        for _ in 0..<500 where served == nil {
            let client = try harness.connect { $0.write(Self.get("/after")) }
            served = await client.replies(1).first
            if served == nil { try await Task.sleep(for: .milliseconds(20)) }
        }
        #expect(served?.body == Array("/after".utf8))
    }
}
