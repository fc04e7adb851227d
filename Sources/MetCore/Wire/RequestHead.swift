import HTTPGrammar

/// The head of one HTTP/1.x request (request line and header fields), parsed from the bytes a
/// client sent. Pure: the HTTP layer finds the head's end with `end(in:from:)`, parses it here,
/// then reads the body the head announces.
public struct RequestHead: Sendable, Equatable {
    /// How the body that follows the head is delimited.
    public enum Framing: Sendable, Equatable {
        /// Exactly this many bytes follow (0 when the request has no body).
        case length(Int)
        /// A chunked body follows (see `ChunkedBody`).
        case chunked
    }

    /// The method as sent (a token; case-sensitive).
    public var method: String
    /// The request target in origin-form (`/path?query`) as the core routes it: as sent, except
    /// that an absolute-form target (`http://host/path?query`) is reduced to its path and query
    /// (`/` when the path is empty). `*` (OPTIONS) and `host:port` (CONNECT) are kept as sent.
    public var target: String
    /// 0 for HTTP/1.0, 1 for HTTP/1.1.
    public var minorVersion: Int
    /// The header fields in the order sent, values trimmed of surrounding spaces and tabs. With an
    /// absolute-form target, `Host` holds the target's authority (RFC 9112 §3.2.2: it wins over
    /// the field sent).
    public var headers: HTTPFields
    /// How the body is delimited.
    public var framing: Framing
    /// Whether the connection may carry another request after this one's response.
    public var keepAlive: Bool
    /// Whether the client waits for `100 Continue` before it sends the body.
    public var expectsContinue: Bool

    /// The request the core sees, with `body`.
    public func request(body: [UInt8]) -> Request {
        Request(method: method, target: target, headers: headers, body: body)
    }

    /// The offset just past the blank line that ends a head starting at `bytes[0]`, or nil when
    /// the head is not complete yet. A bare LF also counts as a line end here, only so that a head
    /// using bare LFs is found (and then refused by `init(parsing:)`) at once rather than waited
    /// on. `start` is where an earlier call stopped looking (bytes before it are not searched again).
    public static func end(in bytes: UnsafeRawBufferPointer, from start: Int = 0) -> Int? {
        var index = max(start, 1)
        while index < bytes.count {
            if bytes[index] == lineFeed {
                // "\n\n" or "\n\r\n": a line feed, then an empty line.
                if bytes[index - 1] == lineFeed { return index + 1 }
                if bytes[index - 1] == carriageReturn, index >= 2, bytes[index - 2] == lineFeed { return index + 1 }
            }
            index += 1
        }
        return nil
    }

    /// Where `end(in:from:)` may resume once more bytes have arrived after `count` bytes.
    public static func resumePoint(afterSearching count: Int) -> Int { max(0, count - 2) }

    /// Parses a complete head (everything up to and including its blank line), strictly by
    /// RFC 9112: every line ends in CRLF (a bare LF is refused; §2.2 lets a recipient accept it,
    /// but a proxy in front that does not would frame the bytes differently); the target is
    /// visible ASCII (0x21–0x7E) in one of the four forms of §3.2; an HTTP/1.1 request has exactly
    /// one `Host`, and any `Host` is a valid `uri-host [":" port]`. Empty lines before the request
    /// line are skipped, as RFC 9112 §2.2 allows.
    ///
    /// - Throws: `malformed_request` (400) for anything that is not an HTTP/1.x request head, with
    ///   a detail naming what is wrong; `invalid_request_target` (400) for a target in no valid
    ///   form; `http_version_not_supported` (505) for another major version;
    ///   `transfer_coding_not_supported` (501) for a transfer coding other than chunked.
    public init(parsing bytes: UnsafeRawBufferPointer) throws(Problem) {
        var lines = LineReader(bytes)
        var requestLine = try lines.next()
        while let line = requestLine, line.isEmpty { requestLine = try lines.next() }
        guard let requestLine else { throw Self.malformed("The request has no request line.") }
        let space = UInt8(ascii: " ")
        guard let methodEnd = requestLine.firstIndex(of: space), methodEnd > requestLine.startIndex,
            let targetEnd = requestLine[(methodEnd + 1)...].firstIndex(of: space),
            requestLine[requestLine.startIndex..<methodEnd].allSatisfy(Grammar.isTokenByte)
        else {
            throw Self.malformed("The request line must be METHOD TARGET HTTP/1.1.")
        }
        let rawTarget = requestLine[(methodEnd + 1)..<targetEnd]
        guard !rawTarget.isEmpty, rawTarget.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
            throw Self.malformed("The request target is empty or has bytes other than visible ASCII.")
        }
        minorVersion = try Self.minorVersion(requestLine[(targetEnd + 1)...])
        method = Self.string(requestLine[requestLine.startIndex..<methodEnd])
        let form = try TargetForm(rawTarget, method: method)
        target = form.originForm ?? Self.string(rawTarget)

        var headers = HTTPFields()
        var framing = Framing.length(0)
        var sawLength = false
        var sawCoding = false
        var hostFields = 0
        var closeRequested = false
        var keepAliveRequested = false
        var expectsContinue = false
        while let line = try lines.next(), !line.isEmpty {
            let (rawName, rawValue) = try FieldLine.split(line)
            let field = HTTPFields.Field(name: Self.string(rawName), value: Self.string(rawValue))
            headers.append(field)
            switch field.name.utf8.count {
            case 4 where Grammar.equalsIgnoringCase(field.name.utf8, "Host".utf8):
                guard Authority.isValid(rawValue) else {
                    throw Self.malformed("The Host field must be a host name or address, with an optional port.")
                }
                hostFields += 1
            case 6 where Grammar.equalsIgnoringCase(field.name.utf8, "Expect".utf8):
                expectsContinue = expectsContinue || Grammar.equalsIgnoringCase(field.value.utf8, "100-continue".utf8)
            case 10 where Grammar.equalsIgnoringCase(field.name.utf8, "Connection".utf8):
                for token in field.value.split(separator: ",") {
                    let token = token.trimmingSpaces()
                    if Grammar.equalsIgnoringCase(token.utf8, "close".utf8) { closeRequested = true }
                    if Grammar.equalsIgnoringCase(token.utf8, "keep-alive".utf8) { keepAliveRequested = true }
                }
            case 14 where Grammar.equalsIgnoringCase(field.name.utf8, "Content-Length".utf8):
                framing = try Self.contentLength(field.value, previous: sawLength ? framing : nil)
                sawLength = true
            case 17 where Grammar.equalsIgnoringCase(field.name.utf8, "Transfer-Encoding".utf8):
                sawCoding = true
            default:
                break
            }
        }
        // RFC 9112 §3.2: a 400 for an HTTP/1.1 request without Host, and for any with two.
        guard hostFields == 1 || (hostFields == 0 && minorVersion == 0) else {
            throw Self.malformed(
                hostFields == 0 ? "An HTTP/1.1 request needs a Host field." : "A request may carry only one Host field."
            )
        }
        if let authority = form.authority { headers.set("Host", authority) }
        self.headers = headers
        if sawCoding {
            framing = try Self.chunkedFraming(headers, minorVersion: minorVersion, hasLength: sawLength)
        }
        self.framing = framing
        keepAlive = !closeRequested && (minorVersion == 1 || keepAliveRequested)
        self.expectsContinue = minorVersion == 1 && expectsContinue
    }

    private static func string(_ bytes: Slice<UnsafeRawBufferPointer>) -> String {
        String(decoding: UnsafeRawBufferPointer(rebasing: bytes), as: UTF8.self)
    }

    private static func minorVersion(_ version: Slice<UnsafeRawBufferPointer>) throws(Problem) -> Int {
        let start = version.startIndex
        guard version.count == 8, version.starts(with: "HTTP/".utf8), FieldLine.isDigit(version[start + 5]),
            version[start + 6] == UInt8(ascii: "."), FieldLine.isDigit(version[start + 7])
        else {
            throw malformed("The request line must end in HTTP/1.1 or HTTP/1.0.")
        }
        guard version[start + 5] == UInt8(ascii: "1") else {
            throw Problem(.httpVersionNotSupported, "Only HTTP/1.1 and HTTP/1.0 are served here.")
        }
        return version[start + 7] == UInt8(ascii: "0") ? 0 : 1
    }

    /// One `Content-Length` field (possibly a list of equal values), agreeing with `previous`.
    private static func contentLength(_ value: String, previous: Framing?) throws(Problem) -> Framing {
        var length: Int?
        if case .length(let earlier) = previous { length = earlier }
        for item in value.split(separator: ",", omittingEmptySubsequences: false) {
            let text = item.trimmingSpaces()
            guard !text.isEmpty, text.utf8.count <= 18, text.utf8.allSatisfy(FieldLine.isDigit), let parsed = Int(text),
                length == nil || length == parsed
            else {
                throw malformed("Content-Length must be one non-negative decimal number.")
            }
            length = parsed
        }
        return .length(length ?? 0)
    }

    private static func chunkedFraming(_ headers: HTTPFields, minorVersion: Int, hasLength: Bool) throws(Problem)
        -> Framing
    {
        // Both at once is how requests are smuggled past proxies (RFC 9112 §6.3): refused.
        guard !hasLength else {
            throw malformed("A request may not carry both Transfer-Encoding and Content-Length.")
        }
        guard minorVersion == 1 else { throw malformed("HTTP/1.0 requests cannot use Transfer-Encoding.") }
        let tokens = headers.values(for: "Transfer-Encoding").flatMap { $0.split(separator: ",") }
        guard tokens.count == 1, Grammar.equalsIgnoringCase(tokens[0].trimmingSpaces().utf8, "chunked".utf8) else {
            throw Problem(
                .transferCodingNotSupported, "Only the chunked transfer coding is accepted on request bodies.")
        }
        return .chunked
    }

    private static func malformed(_ detail: String) -> Problem {
        Problem(.malformedRequest, detail)
    }

    /// The byte that ends a line.
    public static let lineFeed = FieldLine.lineFeed
    static let carriageReturn = FieldLine.carriageReturn
}
