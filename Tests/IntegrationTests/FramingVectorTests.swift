import Foundation
import Testing

/// Request framing and smuggling vectors, sent over raw sockets to the real `themet`. Each vector
/// is followed on the same connection by a `GET /next` that asks to close: a rejected vector
/// must answer one problem and close before `/next` runs (a 404 for `/next` in the reply is a
/// smuggled request that ran); an accepted one answers, then `/next` answers 404.
@Suite("Framing and smuggling vectors")
struct FramingVectorTests {
    /// One hostile (or merely unusual) request.
    struct Vector: Sendable, CustomStringConvertible {
        var description: String
        var bytes: [UInt8]
        /// The statuses expected on the connection, `/next`'s 404 included when it must run.
        var statuses: [Int]

        init(_ description: String, _ text: String, _ statuses: [Int]) {
            self.init(description, Array(text.utf8), statuses)
        }

        init(_ description: String, _ bytes: [UInt8], _ statuses: [Int]) {
            self.description = description
            self.bytes = bytes
            self.statuses = statuses
        }
    }

    private static let next = "GET /next HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
    private static let post = "POST /objects/1 HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
    private static let smuggled = "GET /smuggled HTTP/1.1\r\nHost: x\r\n\r\n"

    static let vectors: [Vector] = [
        // Bare LF in chunked framing, each with a smuggled request behind it.
        Vector("bare LF after the chunk size", post + "5\nhello\r\n0\r\n\r\n" + smuggled, [400]),
        Vector("bare LF after the chunk data", post + "5\r\nhello\n0\r\n\r\n" + smuggled, [400]),
        Vector("bare LF after the last chunk", post + "5\r\nhello\r\n0\n\r\n" + smuggled, [400]),
        Vector("bare LF ending the trailer section", post + "0\r\n\n" + smuggled, [400]),
        Vector("bare LF after a trailer field", post + "0\r\nX: y\n\r\n" + smuggled, [400]),
        Vector("bare LF inside a chunk extension", post + "5;a\nb\r\nhello\r\n0\r\n\r\n" + smuggled, [400]),
        // Chunk-size lines.
        Vector("chunk size then junk", post + "5 zz\r\nhello\r\n0\r\n\r\n", [400]),
        Vector("chunk size with 0x prefix", post + "0x5\r\nhello\r\n0\r\n\r\n", [400]),
        Vector("negative chunk size", post + "-5\r\nhello\r\n0\r\n\r\n", [400]),
        Vector("empty chunk size line", post + "\r\nhello\r\n0\r\n\r\n", [400]),
        Vector("control character in a chunk extension", post + "5;a\u{1}b\r\nhello\r\n0\r\n\r\n", [400]),
        Vector("bare CR in a chunk extension", post + "5;a\rb\r\nhello\r\n0\r\n\r\n", [400]),
        Vector("chunk extension without a name", post + "5;\r\nhello\r\n0\r\n\r\n", [400]),
        Vector("chunk extension with an unterminated quote", post + "5;a=\"b\r\nhello\r\n0\r\n\r\n", [400]),
        Vector("chunk data longer than its size", post + "2\r\nabc\r\n0\r\n\r\n", [400]),
        Vector("chunk size past every limit", post + "FFFFFFFFFFFFFFFFFFFFFFFF\r\nhello\r\n0\r\n\r\n", [413]),
        Vector("chunked body over the body limit", post + "10001\r\n" + String(repeating: "a", count: 65_537), [413]),
        Vector("chunk size line of 5000 zeros", post + String(repeating: "0", count: 5_000) + "5\r\nhello\r\n", [400]),
        Vector("well-formed chunk extensions", post + "5 ; a=b ;c;d=\"q \\\" x\"\r\nhello\r\n0\r\n\r\n", [405, 404]),
        Vector("whitespace after the chunk size", post + "5\t \r\nhello\r\n0\r\n\r\n", [405, 404]),
        Vector("uppercase hex chunk size", post + "A\r\n0123456789\r\n0\r\n\r\n", [405, 404]),
        // Trailers.
        Vector("trailer line without a colon", post + "0\r\nNo colon\r\n\r\n", [400]),
        Vector("trailer with a space before the colon", post + "0\r\nX : y\r\n\r\n", [400]),
        Vector("folded trailer line", post + "0\r\nX: y\r\n z\r\n\r\n", [400]),
        Vector("trailer value with a control character", post + "0\r\nX: a\u{1}b\r\n\r\n", [400]),
        Vector(
            "trailer section over the head limit", post + "0\r\n" + String(repeating: "X: y\r\n", count: 8_000), [431]),
        Vector("well-formed trailers", post + "0\r\nX-A: 1\r\nX-B: two words\r\n\r\n", [405, 404]),
        // The request target.
        Vector(
            "UTF-8 in the target", Array("GET /caf".utf8) + [0xC3, 0xA9] + Array(" HTTP/1.1\r\nHost: x\r\n\r\n".utf8),
            [400]),
        Vector(
            "byte 0xFF in the target", Array("GET /".utf8) + [0xFF] + Array(" HTTP/1.1\r\nHost: x\r\n\r\n".utf8), [400]),
        Vector("DEL in the target", "GET /a\u{7F}b HTTP/1.1\r\nHost: x\r\n\r\n", [400]),
        Vector("absolute-form target", "GET http://x/health HTTP/1.1\r\nHost: x\r\n\r\n", [200, 404]),
        Vector(
            "absolute-form with another host", "GET HTTP://other:80/health HTTP/1.1\r\nHost: x\r\n\r\n", [200, 404]),
        Vector("absolute-form with userinfo", "GET http://u@x/health HTTP/1.1\r\nHost: x\r\n\r\n", [400]),
        Vector("absolute-form with another scheme", "GET ftp://x/health HTTP/1.1\r\nHost: x\r\n\r\n", [400]),
        Vector("authority-form outside CONNECT", "GET x:80 HTTP/1.1\r\nHost: x\r\n\r\n", [400]),
        Vector("asterisk-form outside OPTIONS", "GET * HTTP/1.1\r\nHost: x\r\n\r\n", [400]),
        Vector("a target that is no form at all", "GET health HTTP/1.1\r\nHost: x\r\n\r\n", [400]),
        // Host.
        Vector("HTTP/1.1 without Host", "GET /health HTTP/1.1\r\n\r\n", [400]),
        Vector("two Host fields", "GET /health HTTP/1.1\r\nHost: x\r\nHost: x\r\n\r\n", [400]),
        Vector("Host with a list", "GET /health HTTP/1.1\r\nHost: x, y\r\n\r\n", [400]),
        Vector("Host with a space", "GET /health HTTP/1.1\r\nHost: a b\r\n\r\n", [400]),
        Vector("Host with a port past 65535", "GET /health HTTP/1.1\r\nHost: x:65536\r\n\r\n", [400]),
        Vector("Host with a letter in its port", "GET /health HTTP/1.1\r\nHost: x:8a\r\n\r\n", [400]),
        Vector("Host with userinfo", "GET /health HTTP/1.1\r\nHost: u@x\r\n\r\n", [400]),
        Vector("Host with a path", "GET /health HTTP/1.1\r\nHost: x/y\r\n\r\n", [400]),
        Vector("Host with an unclosed IPv6 literal", "GET /health HTTP/1.1\r\nHost: [::1\r\n\r\n", [400]),
        Vector("Host with a bad IPv6 literal", "GET /health HTTP/1.1\r\nHost: [::g]\r\n\r\n", [400]),
        Vector("Host as an IPv6 literal and port", "GET /health HTTP/1.1\r\nHost: [::1]:8080\r\n\r\n", [200, 404]),
        Vector("Host as an IPv4 address and port", "GET /health HTTP/1.1\r\nHost: 127.0.0.1:80\r\n\r\n", [200, 404]),
        Vector("HTTP/1.0 without Host", "GET /health HTTP/1.0\r\nConnection: keep-alive\r\n\r\n", [200, 404]),
        Vector("HTTP/1.0 with a bad Host", "GET /health HTTP/1.0\r\nHost: a b\r\n\r\n", [400]),
        // Message framing in the head.
        Vector(
            "Content-Length and Transfer-Encoding",
            "POST /objects/1 HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n"
                + "0\r\n\r\n" + smuggled, [400]),
        Vector(
            "Transfer-Encoding and Content-Length",
            "POST /objects/1 HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n"
                + "0\r\n\r\n" + smuggled, [400]),
        Vector(
            "two different Content-Lengths",
            "POST /objects/1 HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello!", [400]),
        Vector(
            "a Content-Length list that differs", "POST /objects/1 HTTP/1.1\r\nHost: x\r\nContent-Length: 5, 6\r\n\r\n",
            [400]),
        Vector(
            "a signed Content-Length", "POST /objects/1 HTTP/1.1\r\nHost: x\r\nContent-Length: +5\r\n\r\nhello", [400]),
        Vector(
            "equal Content-Lengths", "POST /objects/1 HTTP/1.1\r\nHost: x\r\nContent-Length: 5, 5\r\n\r\nhello",
            [405, 404]),
        Vector(
            "Transfer-Encoding chunked twice",
            "POST /objects/1 HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked, chunked\r\n\r\n", [501]),
        Vector(
            "Transfer-Encoding on HTTP/1.0", "POST /objects/1 HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
            [400]),
        Vector("obs-fold in a header", "GET /health HTTP/1.1\r\nHost: x\r\nX: a\r\n b\r\n\r\n", [400]),
        Vector("space before a header colon", "GET /health HTTP/1.1\r\nHost : x\r\n\r\n", [400]),
        Vector("bare LF ending the head's lines", "GET /health HTTP/1.1\nHost: x\n\n" + smuggled, [400]),
        Vector("bare LF ending one header line", "GET /health HTTP/1.1\r\nHost: x\nX: y\r\n\r\n", [400]),
        Vector("bare CR in a header value", "GET /health HTTP/1.1\r\nHost: x\r\nX: a\rb\r\n\r\n", [400]),
        Vector("NUL in a header value", "GET /health HTTP/1.1\r\nHost: x\r\nX: a\u{0}b\r\n\r\n", [400]),
        Vector("tab between method and target", "GET\t/health HTTP/1.1\r\nHost: x\r\n\r\n", [400]),
        Vector("lowercase protocol name", "GET /health http/1.1\r\nHost: x\r\n\r\n", [400]),
        Vector("an empty line before the request line", "\r\nGET /health HTTP/1.1\r\nHost: x\r\n\r\n", [200, 404]),
        Vector(
            "a Content-Length body, then the next request",
            "POST /objects/1 HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello", [405, 404]),
    ]

    /// The statuses of the responses in `text`, in order.
    private func statuses(_ text: String) -> [Int] {
        text.components(separatedBy: "HTTP/1.1 ").dropFirst().compactMap { Int($0.prefix(3)) }
    }

    @Test func everyVectorGetsItsAnswerAndNothingSmuggledRuns() async throws {
        let servers = try await Servers.start()
        let port = servers.themet.port
        let outcomes = try await withThrowingTaskGroup(of: (Vector, RawHTTP.Exchange).self) { group in
            for vector in Self.vectors {
                group.addTask {
                    let reply = try await RawHTTP.exchange(
                        port: port, request: vector.bytes + Array(Self.next.utf8), readTimeout: 5)
                    return (vector, reply)
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        var failures: [String] = []
        for (vector, reply) in outcomes {
            let seen = statuses(reply.text)
            let ok =
                seen == vector.statuses && reply.closedByServer && !reply.text.contains("/smuggled")
                && (vector.statuses.last != 400 || reply.text.contains("application/problem+json"))
            if !ok {
                failures.append("\(vector): expected \(vector.statuses), got \(seen) closed=\(reply.closedByServer)")
            }
            #expect(ok, "\(vector): expected \(vector.statuses), got \(seen), closed: \(reply.closedByServer)")
        }
        print("framing vectors: \(Self.vectors.count - failures.count) of \(Self.vectors.count) as expected")
        for failure in failures { print("  FAIL \(failure)") }
        #expect(try await servers.get("/health").status == 200)
    }
}
