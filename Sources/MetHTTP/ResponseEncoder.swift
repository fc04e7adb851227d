import HTTPGrammar
import HTTPWire
import MetEngine

/// Turns the core's `Response` into the bytes of an HTTP/1.1 response. Pure; the connection
/// writes the two parts with one `writev`. Here, where the core's types meet the wire, rather
/// than in `HTTPWire`, which knows no core type: its formats (`ReasonPhrase`, `HTTPDate`) are
/// used from there.
enum ResponseEncoder {
    /// The status line and header fields (ending in the blank line), and the body bytes to follow.
    ///
    /// - Parameters:
    ///   - isHead: the request was HEAD: `Content-Length` is the GET body's, and no body follows.
    ///   - minorVersion: the request's HTTP/1.x minor version; an HTTP/1.0 client gets
    ///     `Connection: keep-alive` when the connection stays open, and never a chunked body.
    ///   - close: the connection closes after this response (`Connection: close`).
    ///   - date: the `Date` field line, CRLF included (see `HTTPDate`).
    ///   - requestID: sent as `X-Request-Id` (nil: none; the shared heads leave it out, and
    ///     `insertRequestID` adds it to a copy).
    /// - Returns: `body` shares the response's storage unless the response asks for chunked
    ///   framing (the fake Met only), which is added around a copy. A body sent from a file
    ///   (`Response.fileBody`) is not in it: the head counts it, and the connection sends it.
    ///
    /// Header fields whose name is not a token, or whose value holds CR, LF or NUL, are dropped:
    /// nothing a handler puts in a value can start a new header line.
    static func encode(
        _ response: Response, isHead: Bool, minorVersion: Int, close: Bool, date: [UInt8], requestID: String? = nil
    ) -> (head: [UInt8], body: [UInt8]) {
        var head: [UInt8] = []
        head.reserveCapacity(512)
        head.append(contentsOf: "HTTP/1.1 ".utf8)
        head.appendDecimal(response.status)
        head.append(UInt8(ascii: " "))
        append(ReasonPhrase.for(response.status), to: &head)
        head.append(contentsOf: crlf)
        for field in response.headers {
            appendLine(field, to: &head)
        }
        head.append(contentsOf: date)

        let status = response.status
        let mayHaveBody = !(100..<200).contains(status) && status != 204 && status != 304
        var body: [UInt8] = []
        if mayHaveBody {
            if response.isChunked && minorVersion == 1 && !isHead {
                head.append(contentsOf: "Transfer-Encoding: chunked\r\n".utf8)
                if !response.body.isEmpty {
                    body.append(contentsOf: String(response.body.count, radix: 16).utf8)
                    body.append(contentsOf: crlf)
                    body.append(contentsOf: response.body)
                    body.append(contentsOf: crlf)
                }
                body.append(contentsOf: "0\r\n\r\n".utf8)
            } else {
                head.append(contentsOf: "Content-Length: ".utf8)
                head.appendDecimal(response.bodyLength)
                head.append(contentsOf: crlf)
                if !isHead { body = response.body }
            }
        }
        if close {
            head.append(contentsOf: "Connection: close\r\n".utf8)
        } else if minorVersion == 0 {
            head.append(contentsOf: "Connection: keep-alive\r\n".utf8)
        }
        head.append(contentsOf: crlf)
        if let requestID { insertRequestID(requestID, into: &head) }
        return (head, body)
    }

    /// Adds `X-Request-Id: id` as the last field of a finished head (before its blank line).
    /// The ID comes from `RequestIDs`, whose characters need no escaping; an ID holding anything
    /// else is left out, as `appendLine` would leave out such a value.
    static func insertRequestID(_ id: String, into head: inout [UInt8]) {
        guard head.count >= 4, RequestIDs.isUsable(id) else { return }
        head.removeLast(2)
        head.append(contentsOf: "X-Request-Id: ".utf8)
        append(id, to: &head)
        head.append(contentsOf: crlf)
        head.append(contentsOf: crlf)
    }

    private static let crlf: [UInt8] = [13, 10]

    /// Appends `NAME: VALUE` CRLF, unless the name is not a token or the value holds CR, LF or NUL.
    private static func appendLine(_ field: HTTPFields.Field, to bytes: inout [UInt8]) {
        var name = field.name
        var value = field.value
        name.makeContiguousUTF8()
        value.makeContiguousUTF8()
        name.utf8.withContiguousStorageIfAvailable { name in
            value.utf8.withContiguousStorageIfAvailable { value in
                guard !name.isEmpty, name.allSatisfy(Grammar.isTokenByte) else { return }
                for byte in value where byte == 13 || byte == 10 || byte == 0 { return }
                bytes.append(contentsOf: name)
                bytes.append(UInt8(ascii: ":"))
                bytes.append(UInt8(ascii: " "))
                bytes.append(contentsOf: value)
                bytes.append(13)
                bytes.append(10)
            }
        }
    }

    /// Appends a string's UTF-8 bytes.
    private static func append(_ string: String, to bytes: inout [UInt8]) {
        var string = string
        string.makeContiguousUTF8()
        string.utf8.withContiguousStorageIfAvailable { bytes.append(contentsOf: $0) }
    }

}
