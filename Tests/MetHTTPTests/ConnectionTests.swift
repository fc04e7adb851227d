import Foundation
import Testing

@testable import MetHTTP

/// `HTTPLoop` and `HTTPConnection` driven over a socketpair: no TCP, no sleeps. Every wait is
/// bounded, by a read timeout or a count of polls, and the time limit bounds the rest.
@Suite("Connections over a socketpair", .timeLimit(.minutes(5)))
struct ConnectionTests {
    private static func get(_ target: String, _ extra: String = "") -> String {
        "GET \(target) HTTP/1.1\r\nHost: x\r\n\(extra)\r\n"
    }

    @Test func pipelinedRequestsWaitWhileTheOutputIsBackedUpAndResumeWhenTheClientReads() async throws {
        let responder = TestResponder()
        let harness = try LoopHarness(responder: responder)
        defer { harness.shutDown() }
        let small = (1...10).map { "/small/\($0)" }
        // All in the loop's first read: the big response, then ten small ones pipelined behind it.
        let client = try harness.connect { $0.write(Self.get("/big") + small.map { Self.get($0) }.joined()) }
        await responder.bigServed.wait()
        await harness.barrier()
        // The read callback that answered /big is over, and it took none of the others: more
        // than 256 KiB was still queued for a client that had read nothing.
        #expect(responder.targets == ["/big"])

        let replies = await client.replies(1 + small.count)
        #expect(replies.first?.body == TestResponder.bigBody)
        #expect(replies.dropFirst().map { String(decoding: $0.body, as: UTF8.self) } == small)
        #expect(responder.targets == ["/big"] + small)
    }

    @Test func aPipelinedRequestIsAnsweredAfterTheSlowOneAheadOfIt() async throws {
        let responder = TestResponder()
        let harness = try LoopHarness(responder: responder)
        defer { harness.shutDown() }
        let client = try harness.connect { $0.write(Self.get("/slow") + Self.get("/after")) }
        await responder.slowArrived.wait()
        await harness.barrier()
        // /slow waits in its task; /after, already read, waits its turn behind it.
        #expect(responder.targets == ["/slow"])
        #expect(client.pendingBytes == 0)

        responder.releaseSlow.fire()
        let replies = await client.replies(2)
        #expect(replies.map { String(decoding: $0.body, as: UTF8.self) } == ["slow", "/after"])
        #expect(responder.targets == ["/slow", "/after"])
    }

    @Test func afterConnectionCloseTheServerShutsItsSideAndKeepsReading() async throws {
        let harness = try LoopHarness(responder: TestResponder())
        defer { harness.shutDown() }
        let client = try harness.connect()
        // The request, then more bytes than the socket holds, in one go: the client is still
        // sending when the response is written. All of it is taken only if the server reads on
        // (and drops) what follows its last response, rather than closing under the client.
        let failure = await client.send(Array(Self.get("/last", "Connection: close\r\n").utf8) + TestResponder.bigBody)
        #expect(failure == nil)
        let replies = await client.replies(1)
        #expect(replies.first?.body == Array("/last".utf8))
        #expect(replies.first?.fields["connection"] == "close")
        // The whole response, then the end of the server's side: not a reset.
        #expect(await client.next() == .end)
    }

    @Test func aClientThatStopsReadingIsClosedByTheIdleTimeout() async throws {
        let harness = try LoopHarness(responder: TestResponder(), idleTimeout: 0.2)
        defer { harness.shutDown() }
        let client = try harness.connect { $0.write(Self.get("/big")) }
        // The client reads nothing: the response backs up until the idle timeout closes it.
        #expect(await client.hangsUp())
        // What did arrive is a truncated response: the server gave up rather than finished.
        #expect(client.pendingBytes < TestResponder.bigBody.count)
    }
}
