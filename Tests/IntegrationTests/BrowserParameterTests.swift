import Foundation
import Testing

/// `_`, repeated parameters, `X-Request-Id` and `Origin` as hostile clients send them, over raw
/// sockets to the built themet, whose libcurl client asks met-fixture-server over loopback HTTP.
@Suite("Cache-busters, repeats, request IDs and origins over the wire")
struct BrowserParameterTests {
    /// One raw exchange: the status and the head's lines.
    private static func exchange(_ target: String, _ fields: [String] = [], port: Int) async throws -> (
        status: Int, head: [Substring], body: String
    ) {
        let request = (["GET \(target) HTTP/1.1", "Host: 127.0.0.1", "Connection: close"] + fields + ["", ""])
            .joined(separator: "\r\n")
        let text = try await RawHTTP.exchange(port: port, request: Array(request.utf8)).text
        let parts = text.components(separatedBy: "\r\n\r\n")
        let head = parts[0].split(separator: "\r\n")
        let status = head.first.flatMap { Int($0.split(separator: " ").dropFirst().first ?? "") } ?? -1
        return (status, head, parts.dropFirst().joined(separator: "\r\n\r\n"))
    }

    @Test func aCacheBusterIsNoPartOfTheKeyAndRepeatsAreRefusedBeforeTheMet() async throws {
        let servers = try await Servers.start(themet: ["--cors-origin", "http://127.0.0.1:5173,http://localhost:3000"])
        let port = servers.themet.port
        for buster in ["1733040000000", "", "%22%0d%0a", "x&_=y"] {
            #expect(try await Self.exchange("/objects/436535?_=\(buster)", port: port).status == 200)
            #expect(try await Self.exchange("/search?q=cypress&_=\(buster)&limit=2", port: port).status == 200)
        }
        var stats = try await servers.upstreamStats()
        #expect(stats.paths["/public/collection/v1/objects/436535"] == 1)  // one key, whatever `_` held
        for (target, parameter) in [
            ("/objects/436535?fields=title&fields=objectID", "fields"), ("/search?q=a&q=b", "q"),
            ("/objects?ids=1&ids=2", "ids"), ("/random?departmentId=1&departmentId=1", "departmentId"),
            ("/widget/timeline?family=large&family=large", "family"),
        ] {
            let answer = try await Self.exchange(target, port: port)
            #expect(answer.status == 400, "\(target)")
            #expect(answer.body.contains(#""parameter":"\#(parameter)""#), "\(target): \(answer.body)")
        }
        let before = stats.total
        stats = try await servers.upstreamStats()
        #expect(stats.total == before)
    }

    @Test func hostileRequestIDsAndOriginsNeverReachTheHead() async throws {
        let servers = try await Servers.start(themet: ["--cors-origin", "http://127.0.0.1:5173"])
        let port = servers.themet.port
        for id in ["a\"b", "x y", String(repeating: "z", count: 65), "é", "{}", "ok-1.2:3"] {
            let answer = try await Self.exchange("/objects/abc", ["X-Request-Id: \(id)"], port: port)
            let echoed = answer.head.first { $0.hasPrefix("X-Request-Id: ") }.map { String($0.dropFirst(14)) }
            let value = try #require(echoed)
            #expect(value == (id == "ok-1.2:3" ? id : value))
            #expect(id == "ok-1.2:3" || (value.count == 16 && value != id), "\(id) → \(value)")
            #expect(answer.body.contains(#""requestId":"\#(value)""#))
        }
        for origin in ["http://127.0.0.1:5173", "http://127.0.0.1:5173/", "null", "http://evil.example", "*"] {
            let answer = try await Self.exchange("/objects/436535", ["Origin: \(origin)"], port: port)
            #expect(answer.status == 200)
            let allowed = answer.head.first { $0.hasPrefix("Access-Control-Allow-Origin: ") }
            #expect(allowed == (origin == "http://127.0.0.1:5173" ? "Access-Control-Allow-Origin: \(origin)" : nil))
            #expect(answer.head.contains { $0.hasPrefix("Vary: ") && $0.contains("Origin") })
        }
        #expect(try await servers.get("/health").status == 200)
    }
}
