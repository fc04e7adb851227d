import Foundation
import Testing

@Suite("Client-side limits")
struct ClientLimitTests {
    @Test func slowlorisClientsGetA408AtTheRequestDeadlineHoweverSteadilyTheyTrickle() async throws {
        // A byte every 50 ms keeps any idle timer alive; only the deadline from the first byte ends it.
        let servers = try await Servers.start(themet: ["--read-timeout", "1", "--idle-timeout", "60"])
        let endless = Array(("GET /health HTTP/1.1\r\nHost: x\r\nX-Slow: " + String(repeating: "a", count: 200)).utf8)
        let replies = try await withThrowingTaskGroup(of: (sent: Int, reply: RawHTTP.Exchange).self) { group in
            for _ in 0..<5 {
                group.addTask {
                    let connection = try RawConnection(port: servers.themet.port)
                    let sent = await connection.trickle(endless, interval: 0.05)
                    return (sent, await connection.readToEnd())
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(replies.count == 5)
        for (sent, reply) in replies {
            #expect(sent < endless.count, "the server waited for the whole trickle")
            #expect(reply.text.hasPrefix("HTTP/1.1 408 "))
            #expect(reply.text.contains("\"code\":\"request_timeout\""))
            #expect(reply.closedByServer)
        }
        #expect(try await servers.get("/health").status == 200)
    }

    @Test func atTheConnectionCapNewClientsWaitAndAreServedOnceOthersClose() async throws {
        // Four requests the Met holds for 40 s: busy connections, which are never shed. (Once
        // answered they would be idle, and shed after a second for the waiting clients: the hold
        // must outlast the steps below by far, under ThreadSanitizer too, where the four have
        // reached the Met many seconds apart.)
        let servers = try await Servers.start(
            fake: ["--latency", "40000"],
            themet: ["--max-connections", "4", "--loops", "2", "--upstream-timeout", "60s", "--request-timeout", "60s"]
                + MultiInstanceTests.unpaced)
        let port = servers.themet.port
        let request = Array("GET /health HTTP/1.1\r\nHost: x\r\n\r\n".utf8)
        var held: [RawConnection] = []
        for id in [1, 45734, 436535, 437980] {
            let connection = try RawConnection(port: port, readTimeout: 50)
            #expect(await connection.send(Array("GET /objects/\(id) HTTP/1.1\r\nHost: x\r\n\r\n".utf8)))
            held.append(connection)
        }
        // All four accepted and at the Met: with two loops, one slow to accept could otherwise
        // take a later client first.
        try await servers.waitUntilTheMetHolds(4)
        // The fifth is connected by the kernel but not accepted: no answer while four are busy.
        let waiting = try RawConnection(port: port, readTimeout: 0.5)
        #expect(await waiting.send(request))
        #expect(await waiting.readResponse().isEmpty)
        let extra = try RawConnection(port: port, readTimeout: 0.5)
        #expect(await extra.send(request))
        #expect(await extra.readResponse().isEmpty)
        for connection in held { #expect(await connection.readResponse().hasPrefix("HTTP/1.1 200 ")) }
        held.removeAll()  // closes all four: the listeners resume and the two waiting are served
        for connection in [waiting, extra] {
            var reply = ""
            for _ in 0..<20 where reply.isEmpty { reply = await connection.readResponse() }  // 10 s at most
            #expect(reply.hasPrefix("HTTP/1.1 200 "))
        }
        #expect(try await servers.get("/health").status == 200)
        let warnings = servers.themet.standardError.components(separatedBy: "(--max-connections)").count - 1
        // The four closes reach the loops one by one: a loop may accept a waiting client after the
        // first and reach the cap again, a second episode. Never one warning per refused accept.
        #expect((1...2).contains(warnings), "one warning per episode, not one per refused accept")
    }

    @Test func atTheCapConnectionsSlowToSendTheirRequestMakeRoomForOrdinaryClients() async throws {
        let servers = try await Servers.start(themet: ["--max-connections", "4", "--loops", "1"])
        let port = servers.themet.port
        var slow: [RawConnection] = []
        for _ in 0..<4 {
            let connection = try RawConnection(port: port, readTimeout: 5)
            #expect(await connection.send(Array("GET /health HTTP/1.1\r\nHo".utf8)))
            slow.append(connection)
        }
        // Well before --read-timeout (10 s): the slow four are closed once they are a second old.
        let ordinary = try RawConnection(port: port, readTimeout: 0.5)
        #expect(await ordinary.send(Array("GET /health HTTP/1.1\r\nHost: x\r\n\r\n".utf8)))
        var reply = ""
        for _ in 0..<8 where reply.isEmpty { reply = await ordinary.readResponse() }  // 4 s at most
        #expect(reply.hasPrefix("HTTP/1.1 200 "))
        #expect(slow.count == 4)  // held open by the test until here
    }
}
