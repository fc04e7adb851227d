import HTTPWire
import MetEngine
import Testing

@testable import MetHTTP

@Suite("From the wire to the core: WireError problems, the Request of a head")
struct WireToCoreTests {
    @Test(arguments: [
        (WireError.malformed("d"), "malformed_request", 400),
        (.invalidTarget("d"), "invalid_request_target", 400),
        (.unsupportedVersion("d"), "http_version_not_supported", 505),
        (.unsupportedTransferCoding("d"), "transfer_coding_not_supported", 501),
        (.bodyTooLarge("d"), "body_too_large", 413),
        (.trailerTooLarge("d"), "headers_too_large", 431),
    ])
    func eachWireFailureIsAnsweredWithItsProblem(error: WireError, code: String, status: Int) {
        let problem = Problem(error)
        #expect(problem.code == code)
        #expect(problem.status == status)
        #expect(problem.detail == "d")
    }

    @Test func aHeadBecomesTheRequestTheCoreSees() throws {
        let bytes = Array("POST http://example.org/a?b=c HTTP/1.1\r\nHost: x\r\nX-One: 1\r\nx-one: 2\r\n\r\n".utf8)
        let head = try bytes.withUnsafeBytes { try RequestHead(parsing: $0) }
        let peer = RequestPeer(address: try #require(IPAddress("127.0.0.1")))
        let request = head.request(body: [7], peer: peer)
        #expect(request.peer.isLoopback && request.peer.text == "127.0.0.1")
        #expect(!head.request(body: [], peer: .unknown).peer.isLoopback)
        #expect(request.method == "POST")
        #expect(request.target == "/a?b=c")
        #expect(request.body == [7])
        #expect(request.headers.values(for: "X-ONE") == ["1", "2"])
        #expect(request.headers.map(\.name) == ["X-One", "x-one", "Host"])
        #expect(request.headers["host"] == "example.org")
    }
}
