import Foundation
import MetCore
import MetEngine
import TestKit

/// One HTTP exchange's result.
struct HTTPResult: Sendable {
    let status: Int
    let headers: [String: String]
    let body: Data

    /// A header by case-insensitive name.
    func header(_ name: String) -> String? {
        headers.first { $0.key.caseInsensitiveCompare(name) == .orderedSame }?.value
    }

    /// The body parsed as a JSON object (fails the test if it is not one).
    func json() throws -> [String: Any] {
        guard let object = try JSONSerialization.jsonObject(with: body) as? [String: Any] else {
            throw ProcessFailure("not a JSON object: \(String(decoding: body, as: UTF8.self).prefix(200))")
        }
        return object
    }
}

/// A real HTTP client for integration tests: HTTP/1.1 over a blocking socket on a thread of its
/// own, one connection per request (`Connection: close`), the response read to the server's close.
/// As a browser or curl would: a redirect of a GET or HEAD to this machine is followed (5 at most),
/// and a gzip body is inflated (its fields kept as sent). Not URLSession: on Linux its libdispatch
/// sources for sockets crashed the test process once in a while (a bad pointer in
/// `_dispatch_unote_register_muxed`). Every field is kept (repeated ones joined with ", "); a
/// chunked body is decoded, and a `Content-Length` must match the body.
enum HTTPClient {
    static func request(
        _ url: String, method: String = "GET", headers: [String: String] = [:]
    ) async throws -> HTTPResult {
        var location = url
        for _ in 0...5 {
            guard let parts = URLComponents(string: location), parts.scheme == "http", let port = parts.port,
                ["127.0.0.1", "localhost"].contains(parts.host ?? "")
            else { throw ProcessFailure("not a loopback http URL with a port: \(location)") }
            let target =
                (parts.percentEncodedPath.isEmpty ? "/" : parts.percentEncodedPath)
                + (parts.percentEncodedQuery.map { "?" + $0 } ?? "")
            var head = "\(method) \(target) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n"
            for (name, value) in headers { head += "\(name): \(value)\r\n" }
            let exchange = try await RawHTTP.exchange(
                port: port, request: Array((head + "\r\n").utf8), readTimeout: 30)
            var result = try response(exchange.bytes, toHead: method == "HEAD")
            if [301, 302, 303, 307, 308].contains(result.status), ["GET", "HEAD"].contains(method),
                let next = result.header("Location").flatMap({ URL(string: $0, relativeTo: URL(string: location)) }),
                ["127.0.0.1", "localhost"].contains(next.host ?? "")
            {
                location = next.absoluteString
                continue
            }
            if result.header("Content-Encoding") == "gzip", !result.body.isEmpty {
                result = HTTPResult(
                    status: result.status, headers: result.headers,
                    body: Data(try await Gunzip.inflate(Array(result.body))))
            }
            return result
        }
        throw ProcessFailure("more than 5 redirects from \(url)")
    }

    /// The response `bytes` hold, whole.
    private static func response(_ bytes: [UInt8], toHead: Bool) throws -> HTTPResult {
        let separator = Array("\r\n\r\n".utf8)
        guard let end = bytes.indices.first(where: { bytes[$0...].starts(with: separator) }) else {
            throw ProcessFailure("no whole response head in \(String(decoding: bytes.prefix(200), as: UTF8.self))")
        }
        var lines = String(decoding: bytes[..<end], as: UTF8.self).components(separatedBy: "\r\n")
        let statusLine = lines.removeFirst().split(separator: " ")
        guard statusLine.count >= 2, let status = Int(statusLine[1]) else {
            throw ProcessFailure("no status line: \(statusLine)")
        }
        var fields: [String: String] = [:]
        for line in lines {
            guard let colon = line.firstIndex(of: ":") else { throw ProcessFailure("not a field line: \(line)") }
            let name = String(line[..<colon])
            let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            let known = fields.keys.first { $0.caseInsensitiveCompare(name) == .orderedSame }
            fields[known ?? name] = known.map { fields[$0]! + ", " + value } ?? value
        }
        let result = HTTPResult(status: status, headers: fields, body: Data())
        var body = Array(bytes[(end + separator.count)...])
        if toHead || status == 204 || status == 304 {
            body = []
        } else if result.header("Transfer-Encoding")?.lowercased() == "chunked" {
            body = try dechunked(body)
        } else if let length = result.header("Content-Length"), Int(length) != body.count {
            throw ProcessFailure("Content-Length \(length) for a body of \(body.count) bytes")
        }
        return HTTPResult(status: status, headers: fields, body: Data(body))
    }

    /// A chunked body's data (RFC 9112 §7.1), extensions and trailers ignored.
    private static func dechunked(_ bytes: [UInt8]) throws -> [UInt8] {
        var data: [UInt8] = []
        var offset = 0
        let crlf = Array("\r\n".utf8)
        while true {
            guard let lineEnd = bytes[offset...].indices.first(where: { bytes[$0...].starts(with: crlf) }),
                let size = Int(
                    String(decoding: bytes[offset..<lineEnd], as: UTF8.self).split(separator: ";")[0]
                        .trimmingCharacters(in: .whitespaces), radix: 16),
                lineEnd + 2 + size + 2 <= bytes.count
            else { throw ProcessFailure("a chunked body cut short or malformed") }
            if size == 0 { return data }
            data += bytes[(lineEnd + 2)..<(lineEnd + 2 + size)]
            offset = lineEnd + 2 + size + 2
        }
    }
}
