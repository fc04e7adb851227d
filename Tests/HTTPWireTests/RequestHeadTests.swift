import Testing

@testable import HTTPWire

@Suite("HTTP/1.x request heads")
struct RequestHeadTests {
    private func parse(_ text: String) throws -> RequestHead {
        try Array(text.utf8).withUnsafeBytes { try RequestHead(parsing: $0) }
    }

    private func end(_ text: String, from start: Int = 0) -> Int? {
        Array(text.utf8).withUnsafeBytes { RequestHead.end(in: $0, from: start) }
    }

    private func failure(_ text: String) -> FailureKind? {
        do {
            _ = try parse(text)
            return nil
        } catch {
            return (error as? WireError).map(FailureKind.init)
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
        #expect(head.fields == [.init(name: "Host", value: "x"), .init(name: "Accept", value: "text/html")])
        #expect(head.framing == .length(0))
        #expect(head.keepAlive)
        #expect(!head.expectsContinue)
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
            failure("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n") == .malformed)
        #expect(failure("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n") == .malformed)
        #expect(failure("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999999999999999\r\n\r\n") == .malformed)
        #expect(
            failure("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n")
                == .malformed)
        #expect(
            failure("POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip, chunked\r\n\r\n")
                == .unsupportedTransferCoding)
        #expect(failure("POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n") == .malformed)
        // Every element counts, across fields, however empty once trimmed; only "a,,b" has none between.
        #expect(try parse("POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: ,chunked,\r\n\r\n").framing == .chunked)
        for codings in ["chunked, ,", "chunked\r\nTransfer-Encoding: chunked", ""] {
            #expect(
                failure("POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: \(codings)\r\n\r\n")
                    == .unsupportedTransferCoding, "\(codings)")
        }
        #expect(failure("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5,\r\n\r\n") == .malformed)
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
        #expect(failure(text) == .malformed)
    }

    @Test func otherMajorVersionsAre505() {
        #expect(failure("GET / HTTP/2.0\r\n\r\n") == .unsupportedVersion)
        #expect(failure("GET / HTTP/1.1\r\nHost: x\r\n\r\n") == nil)
    }
}
