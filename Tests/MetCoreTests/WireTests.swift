import Testing

@testable import MetCore

@Suite("HTTP/1.x wire format")
struct WireTests {
    private func parse(_ text: String) throws -> RequestHead {
        try Array(text.utf8).withUnsafeBytes { try RequestHead(parsing: $0) }
    }

    private func end(_ text: String, from start: Int = 0) -> Int? {
        Array(text.utf8).withUnsafeBytes { RequestHead.end(in: $0, from: start) }
    }

    private func code(_ text: String) -> ProblemCode? {
        do {
            _ = try parse(text)
            return nil
        } catch {
            return (error as? Problem)?.code
        }
    }

    /// Bare LF ends are found too, so that `init(parsing:)` refuses them at once.
    @Test func findsTheEndOfAHeadWithCRLFOrBareLF() {
        #expect(end("GET / HTTP/1.1\r\nHost: x\r\n\r\nNEXT") == 27)
        #expect(end("GET / HTTP/1.1\nHost: x\n\nNEXT") == 24)
        #expect(end("GET / HTTP/1.1\r\nHost: x\r\n") == nil)
        // Resuming a search finds an end that straddles the two reads.
        let first = "GET / HTTP/1.1\r\nHost: x\r\n"
        let resume = RequestHead.resumePoint(afterSearching: first.utf8.count)
        #expect(end(first + "\r\n", from: resume) == first.utf8.count + 2)
    }

    @Test func parsesARequestHead() throws {
        let head = try parse("GET /objects/1?fields=title HTTP/1.1\r\nHost: x\r\nAccept:  text/html \r\n\r\n")
        #expect(head.method == "GET")
        #expect(head.target == "/objects/1?fields=title")
        #expect(head.minorVersion == 1)
        #expect(head.headers["accept"] == "text/html")
        #expect(head.framing == .length(0))
        #expect(head.keepAlive)
        #expect(!head.expectsContinue)
        let request = head.request(body: [1])
        #expect(request.target == "/objects/1?fields=title" && request.body == [1])
    }

    @Test func keepAliveFollowsTheVersionAndConnection() throws {
        #expect(try parse("GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").keepAlive == false)
        #expect(try parse("GET / HTTP/1.1\r\nHost: x\r\nConnection: TE, Close\r\n\r\n").keepAlive == false)
        #expect(try parse("GET / HTTP/1.0\r\n\r\n").keepAlive == false)
        #expect(try parse("GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n").keepAlive == true)
        #expect(try parse("\r\nGET / HTTP/1.1\r\nHost: x\r\n\r\n").keepAlive == true)
    }

    @Test func bodyFraming() throws {
        #expect(try parse("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 12\r\n\r\n").framing == .length(12))
        #expect(try parse("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5, 5\r\n\r\n").framing == .length(5))
        #expect(try parse("POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n").framing == .chunked)
        #expect(
            try parse("POST / HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 1\r\n\r\n").expectsContinue
        )
        #expect(
            code("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n") == .malformedRequest)
        #expect(code("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n") == .malformedRequest)
        #expect(code("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999999999999999\r\n\r\n") == .malformedRequest)
        #expect(
            code("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n")
                == .malformedRequest)
        #expect(
            code("POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip, chunked\r\n\r\n")
                == .transferCodingNotSupported)
        #expect(code("POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n") == .malformedRequest)
    }

    @Test(arguments: [
        "GET /\r\n\r\n",
        "GET  / HTTP/1.1\r\n\r\n",
        "G(T / HTTP/1.1\r\n\r\n",
        "GET / HTTP/1.1 extra\r\n\r\n",
        "GET / HTTX/1.1\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: x\r\nNo colon here\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: x\r\nSpace : before colon\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: x\r\n  folded\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: x\r\nX: a\u{1}b\r\n\r\n",
        "GET /a\u{7F}b HTTP/1.1\r\nHost: x\r\n\r\n",
        "\r\n\r\n",
    ])
    func malformedHeadsAreRejected(text: String) {
        #expect(code(text) == .malformedRequest)
    }

    @Test func otherMajorVersionsAre505() {
        #expect(code("GET / HTTP/2.0\r\n\r\n") == .httpVersionNotSupported)
        #expect(code("GET / HTTP/1.1\r\nHost: x\r\n\r\n") == nil)
    }

    private func encode(
        _ response: Response, isHead: Bool = false, minorVersion: Int = 1, close: Bool = false
    ) -> (head: String, body: [UInt8]) {
        let (head, body) = ResponseEncoder.encode(
            response, isHead: isHead, minorVersion: minorVersion, close: close,
            date: Array("Date: D\r\n".utf8))
        return (String(decoding: head, as: UTF8.self), body)
    }

    @Test func encodesStatusHeadersAndLength() {
        let response = Response(status: 200, headers: ["ETag": "\"a\"", "Content-Type": "x/y"], body: [1, 2, 3])
        let plain = encode(response)
        #expect(
            plain.head == "HTTP/1.1 200 OK\r\nETag: \"a\"\r\nContent-Type: x/y\r\nDate: D\r\nContent-Length: 3\r\n\r\n")
        #expect(plain.body == [1, 2, 3])
        let head = encode(response, isHead: true, minorVersion: 0, close: false)
        #expect(head.head.hasSuffix("Content-Length: 3\r\nConnection: keep-alive\r\n\r\n"))
        #expect(head.body.isEmpty)
        #expect(encode(response, close: true).head.hasSuffix("Content-Length: 3\r\nConnection: close\r\n\r\n"))
        let notModified = encode(Response(status: 304, headers: ["ETag": "\"a\""]))
        #expect(!notModified.head.contains("Content-Length"))
        #expect(encode(Response(status: 499)).head.hasPrefix("HTTP/1.1 499 Client Closed Request\r\n"))
    }

    @Test func dropsHeaderLinesThatCouldSplitTheResponse() {
        let response = Response(
            status: 302, headers: ["Location": "/x\r\nSet-Cookie: a=b", "Bad Name": "v", "X-Ok": "fine"])
        let head = encode(response).head
        #expect(!head.contains("Set-Cookie") && !head.contains("Location") && !head.contains("Bad Name"))
        #expect(head.contains("X-Ok: fine\r\n"))
    }

    @Test func chunkedResponsesForHTTP11Only() {
        var response = Response(status: 200, body: Array("hello, world!!!!".utf8))
        response.isChunked = true
        let chunked = encode(response)
        #expect(chunked.head.contains("Transfer-Encoding: chunked\r\n") && !chunked.head.contains("Content-Length"))
        #expect(String(decoding: chunked.body, as: UTF8.self) == "10\r\nhello, world!!!!\r\n0\r\n\r\n")
        #expect(encode(response, minorVersion: 0).head.contains("Content-Length: 16\r\n"))
    }

    @Test(arguments: [
        (0, "Thu, 01 Jan 1970 00:00:00 GMT"),
        (951_782_400, "Tue, 29 Feb 2000 00:00:00 GMT"),
        (1_795_979_268, "Sun, 29 Nov 2026 19:07:48 GMT"),
        (4_102_444_799, "Thu, 31 Dec 2099 23:59:59 GMT"),
        (-1, "Wed, 31 Dec 1969 23:59:59 GMT"),
    ])
    func formatsIMFFixdates(seconds: Int, expected: String) {
        #expect(HTTPDate.imfFixdate(seconds) == expected)
        var date = HTTPDate()
        #expect(date.line(at: seconds) == Array("Date: \(expected)\r\n".utf8))
    }
}
