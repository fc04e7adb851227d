import MetEngine
import Testing

@testable import MetHTTP

@Suite("HTTP/1.1 response encoding")
struct ResponseEncoderTests {
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

    @Test func aFileBodyIsCountedInTheHeadAndLeftToTheConnection() {
        var response = Response(status: 200)
        // The encoder never opens the file.
        response.fileBody = FileBody(offset: 5, length: 1_234, whole: Array(repeating: 7, count: 2_000)) {
            Issue.record("the encoder opened the file")
            return nil
        }
        let encoded = encode(response)
        #expect(encoded.head.hasSuffix("Content-Length: 1234\r\n\r\n") && encoded.body.isEmpty)
        #expect(encode(response, isHead: true).head.hasSuffix("Content-Length: 1234\r\n\r\n"))
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
}
