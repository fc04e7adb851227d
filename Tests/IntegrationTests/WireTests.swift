import Foundation
import Testing

@Suite("HTTP/1.x on the wire")
struct WireTests {
    /// The status codes of the responses in `text`, in order.
    private func statuses(_ text: String) -> [Int] {
        text.components(separatedBy: "HTTP/1.1 ").dropFirst().compactMap { Int($0.prefix(3)) }
    }

    private func exchange(_ servers: Servers, _ request: String) async throws -> RawHTTP.Exchange {
        try await RawHTTP.exchange(port: servers.themet.port, request: Array(request.utf8))
    }

    @Test func pipelinedRequestsAreAnsweredInOrderEvenWhenOneWaitsForTheUpstream() async throws {
        let servers = try await Servers.start(fake: ["--latency", "100"])
        let reply = try await exchange(
            servers,
            "GET /health HTTP/1.1\r\nHost: x\r\n\r\n"
                + "HEAD /objects/436535 HTTP/1.1\r\nHost: x\r\n\r\n"
                + "GET /nope HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        #expect(statuses(reply.text) == [200, 200, 404])
        #expect(reply.closedByServer)
        // HEAD: the GET body's length, and the next response straight after the blank line.
        let head = reply.text.components(separatedBy: "HTTP/1.1 ")[2]
        #expect(head.contains("Content-Length: "))
        #expect(head.hasSuffix("\r\n\r\n"))
    }

    @Test func http10ClosesUnlessAskedToKeepAlive() async throws {
        let servers = try await Servers.start()
        let closing = try await exchange(servers, "GET /health HTTP/1.0\r\n\r\n")
        #expect(statuses(closing.text) == [200])
        #expect(closing.text.contains("Connection: close\r\n"))
        #expect(closing.closedByServer)

        let kept = try await exchange(
            servers,
            "GET /health HTTP/1.0\r\nConnection: keep-alive\r\n\r\nGET /health HTTP/1.0\r\n\r\n")
        #expect(statuses(kept.text) == [200, 200])
        #expect(kept.text.contains("Connection: keep-alive\r\n"))
    }

    @Test func aChunkedBodyIsReadAndTheConnectionCarriesOn() async throws {
        let servers = try await Servers.start()
        let reply = try await exchange(
            servers,
            "POST /objects/1 HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n"
                + "GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        #expect(statuses(reply.text) == [405, 200])
        #expect(reply.text.contains("\"code\":\"method_not_allowed\""))
    }

    @Test(arguments: [
        ("BLAH\r\n\r\n", 400, "malformed_request"),
        ("GET / HTTP/2.0\r\n\r\n", 505, "http_version_not_supported"),
        ("GET /health HTTP/1.1\r\nHost: x\r\nX: a\u{1}b\r\n\r\n", 400, "malformed_request"),
        (
            "POST /objects/1 HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n", 501,
            "transfer_coding_not_supported"
        ),
        ("POST /objects/1 HTTP/1.1\r\nHost: x\r\nContent-Length: 9999999999\r\n\r\n", 413, "body_too_large"),
    ])
    func unreadableRequestsGetAProblemAndTheConnectionCloses(request: String, status: Int, code: String)
        async throws
    {
        let servers = try await Servers.start()
        let reply = try await exchange(servers, request)
        #expect(statuses(reply.text) == [status])
        #expect(reply.text.contains("Content-Type: application/problem+json\r\n"))
        #expect(reply.text.contains("\"code\":\"\(code)\""))
        #expect(reply.text.contains("Connection: close\r\n"))
        #expect(reply.closedByServer)
        #expect(try await servers.get("/health").status == 200)
    }

    @Test func aClientExpecting100ContinueGetsItBeforeSendingItsBody() async throws {
        let servers = try await Servers.start(themet: ["--idle-timeout", "1"])
        // The head alone: the server invites the body, then gives up on it after the idle timeout.
        let reply = try await exchange(
            servers, "POST /objects/1 HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n")
        #expect(reply.text.hasPrefix("HTTP/1.1 100 Continue\r\n\r\n"))
        #expect(statuses(reply.text) == [100, 408])
        #expect(reply.closedByServer)
    }

    @Test func anyMethodTokenReachesTheCore() async throws {
        let servers = try await Servers.start()
        let reply = try await exchange(servers, "BREW /objects/1 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        #expect(statuses(reply.text) == [405])
        #expect(reply.text.contains("Allow: GET, HEAD, OPTIONS\r\n"))
    }
}
