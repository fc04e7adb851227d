import MetEngine
import Testing

@testable import MetHTTP

@Suite("Request IDs and the X-Request-Id field")
struct RequestIDTests {
    @Test func newIDsAre16HexDigitsAndDoNotRepeat() {
        var ids = RequestIDs(seed: 42)
        var seen = Set<String>()
        for _ in 0..<100_000 {
            let id = ids.next()
            #expect(id.utf8.count == 16 && id.utf8.allSatisfy { "0123456789abcdef".utf8.contains($0) })
            seen.insert(id)
        }
        #expect(seen.count == 100_000)
    }

    @Test(arguments: ["trace-42.a:b", "0", "A_B-C.D:E", String(repeating: "x", count: 64)])
    func aClientsUsableIDIsKept(id: String) {
        var ids = RequestIDs(seed: 1)
        #expect(ids.id(given: id) == id)
    }

    @Test(arguments: [
        "", " ", "a b", "a\"b", "a\r\nX-Evil: 1", "é", "a/b", "{x}", String(repeating: "x", count: 65), "a,b",
    ])
    func anythingElseGetsANewOne(id: String) {
        var ids = RequestIDs(seed: 1)
        let chosen = ids.id(given: id)
        #expect(chosen != id)
        #expect(chosen.utf8.count == 16)
    }

    @Test func theFieldGoesLastInTheHeadAndOnlyWhenUsable() {
        let response = Response(status: 200, headers: ["ETag": "\"a\""], body: [1])
        let (head, _) = ResponseEncoder.encode(
            response, isHead: false, minorVersion: 1, close: false, date: Array("Date: D\r\n".utf8),
            requestID: "abc")
        #expect(String(decoding: head, as: UTF8.self).hasSuffix("Content-Length: 1\r\nX-Request-Id: abc\r\n\r\n"))
        var shared = Array("HTTP/1.1 200 OK\r\nDate: D\r\n\r\n".utf8)
        ResponseEncoder.insertRequestID("a\r\nX: 1", into: &shared)
        #expect(String(decoding: shared, as: UTF8.self) == "HTTP/1.1 200 OK\r\nDate: D\r\n\r\n")
        ResponseEncoder.insertRequestID("ok-1", into: &shared)
        #expect(String(decoding: shared, as: UTF8.self) == "HTTP/1.1 200 OK\r\nDate: D\r\nX-Request-Id: ok-1\r\n\r\n")
    }
}
