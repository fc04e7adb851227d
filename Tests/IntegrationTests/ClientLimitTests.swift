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
        let servers = try await Servers.start(themet: ["--max-connections", "4", "--loops", "2"])
        let port = servers.themet.port
        let request = Array("GET /health HTTP/1.1\r\nHost: x\r\n\r\n".utf8)
        var held: [RawConnection] = []
        for _ in 0..<4 {
            let connection = try RawConnection(port: port)
            #expect(await connection.send(request))
            #expect(await connection.readResponse().hasPrefix("HTTP/1.1 200 "))
            held.append(connection)
        }
        // The fifth is connected by the kernel but not accepted: no answer while four are open.
        let waiting = try RawConnection(port: port, readTimeout: 0.5)
        #expect(await waiting.send(request))
        #expect(await waiting.readResponse().isEmpty)
        let extra = try RawConnection(port: port, readTimeout: 0.5)
        #expect(await extra.send(request))
        #expect(await extra.readResponse().isEmpty)
        held.removeAll()  // closes all four: the listeners resume and the two waiting are served
        for connection in [waiting, extra] {
            var reply = ""
            for _ in 0..<20 where reply.isEmpty { reply = await connection.readResponse() }  // 10 s at most
            #expect(reply.hasPrefix("HTTP/1.1 200 "))
        }
        #expect(try await servers.get("/health").status == 200)
        let warnings = servers.themet.standardError.components(separatedBy: "(--max-connections)").count - 1
        #expect(warnings == 1, "one warning per episode, not one per refused accept")
    }
}
