import HTTPGrammar

/// The head of one HTTP/1.x request (request line and header fields), parsed from the bytes a
/// client sent. Pure: the HTTP layer finds the head's end with `end(in:from:)`, parses it here,
/// then reads the body the head announces.
public struct RequestHead: Sendable, Equatable {
    /// How the body that follows the head is delimited.
    public enum Framing: Sendable, Equatable {
        /// Exactly this many bytes follow (0 when the request has no body).
        case length(Int)
        /// A chunked body follows (see `ChunkedDecoder`).
        case chunked
    }

    /// One header field line.
    public struct Field: Sendable, Equatable {
        /// The name as sent (a token; compare it case-insensitively).
        public var name: String
        /// The value, trimmed of surrounding spaces and tabs.
        public var value: String
    }

    /// The method as sent (a token; case-sensitive).
    public var method: String
    /// The request target in origin-form (`/path?query`) as a server routes it: as sent, except
    /// that an absolute-form target (`http://host/path?query`) is reduced to its path and query
    /// (`/` when the path is empty). `*` (OPTIONS) and `host:port` (CONNECT) are kept as sent.
    public var target: String
    /// 0 for HTTP/1.0, 1 for HTTP/1.1.
    public var minorVersion: Int
    /// The header fields in the order sent. With an absolute-form target, one `Host` field holding
    /// the target's authority replaces those sent (RFC 9112 §3.2.2: it wins over the field) and
    /// comes last.
    public var fields: [Field]
    /// How the body is delimited.
    public var framing: Framing
    /// Whether the connection may carry another request after this one's response.
    public var keepAlive: Bool
    /// Whether the client waits for `100 Continue` before it sends the body.
    public var expectsContinue: Bool

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
    /// - Throws: `malformed` for anything that is not an HTTP/1.x request head, with a detail
    ///   naming what is wrong; `invalidTarget` for a target in no valid form; `unsupportedVersion`
    ///   for another major version; `unsupportedTransferCoding` for a transfer coding other than
    ///   chunked.
    public init(parsing bytes: UnsafeRawBufferPointer) throws(WireError) {
        var lines = LineReader(bytes)
        var requestLine = try lines.next()
        while let line = requestLine, line.isEmpty { requestLine = try lines.next() }
        guard let requestLine else { throw .malformed("The request has no request line.") }
        let space = UInt8(ascii: " ")
        guard let methodEnd = requestLine.firstIndex(of: space), methodEnd > requestLine.startIndex,
            let targetEnd = requestLine[(methodEnd + 1)...].firstIndex(of: space),
            requestLine[requestLine.startIndex..<methodEnd].allSatisfy(Grammar.isTokenByte)
        else {
            throw .malformed("The request line must be METHOD TARGET HTTP/1.1.")
        }
        let rawTarget = requestLine[(methodEnd + 1)..<targetEnd]
        guard !rawTarget.isEmpty, rawTarget.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
            throw .malformed("The request target is empty or has bytes other than visible ASCII.")
        }
        minorVersion = try Self.minorVersion(requestLine[(targetEnd + 1)...])
        method = Self.string(requestLine[requestLine.startIndex..<methodEnd])
        let form = try TargetForm(rawTarget, method: method)
        target = form.originForm ?? Self.string(rawTarget)

        var fields: [Field] = []
        var framing = Framing.length(0)
        var sawLength = false
        var sawCoding = false
        // The elements of every Transfer-Encoding field, in order.
        var codings: [Slice<UnsafeRawBufferPointer>] = []
        var hostFields = 0
        var closeRequested = false
        var keepAliveRequested = false
        var expectsContinue = false
        while let line = try lines.next(), !line.isEmpty {
            let (name, value) = try FieldLine.split(line)
            fields.append(Field(name: Self.string(name), value: Self.string(value)))
            switch name.count {
            case 4 where Grammar.equalsIgnoringCase(name, "Host".utf8):
                guard Authority.isValid(value) else {
                    throw .malformed("The Host field must be a host name or address, with an optional port.")
                }
                hostFields += 1
            case 6 where Grammar.equalsIgnoringCase(name, "Expect".utf8):
                expectsContinue = expectsContinue || Grammar.equalsIgnoringCase(value, "100-continue".utf8)
            case 10 where Grammar.equalsIgnoringCase(name, "Connection".utf8):
                for token in FieldLine.elements(of: value, omittingEmpty: true) {
                    if Grammar.equalsIgnoringCase(token, "close".utf8) { closeRequested = true }
                    if Grammar.equalsIgnoringCase(token, "keep-alive".utf8) { keepAliveRequested = true }
                }
            case 14 where Grammar.equalsIgnoringCase(name, "Content-Length".utf8):
                framing = try Self.contentLength(value, previous: sawLength ? framing : nil)
                sawLength = true
            case 17 where Grammar.equalsIgnoringCase(name, "Transfer-Encoding".utf8):
                sawCoding = true
                codings += FieldLine.elements(of: value, omittingEmpty: true)
            default:
                break
            }
        }
        // RFC 9112 §3.2: a 400 for an HTTP/1.1 request without Host, and for any with two.
        guard hostFields == 1 || (hostFields == 0 && minorVersion == 0) else {
            throw .malformed(
                hostFields == 0 ? "An HTTP/1.1 request needs a Host field." : "A request may carry only one Host field."
            )
        }
        if let authority = form.authority {
            fields.removeAll { Grammar.equalsIgnoringCase($0.name.utf8, "Host".utf8) }
            fields.append(Field(name: "Host", value: authority))
        }
        self.fields = fields
        if sawCoding {
            framing = try Self.chunkedFraming(codings, minorVersion: minorVersion, hasLength: sawLength)
        }
        self.framing = framing
        keepAlive = !closeRequested && (minorVersion == 1 || keepAliveRequested)
        self.expectsContinue = minorVersion == 1 && expectsContinue
    }

    private static func string(_ bytes: Slice<UnsafeRawBufferPointer>) -> String {
        String(decoding: UnsafeRawBufferPointer(rebasing: bytes), as: UTF8.self)
    }

    private static func minorVersion(_ version: Slice<UnsafeRawBufferPointer>) throws(WireError) -> Int {
        let start = version.startIndex
        guard version.count == 8, version.starts(with: "HTTP/".utf8), FieldLine.isDigit(version[start + 5]),
            version[start + 6] == UInt8(ascii: "."), FieldLine.isDigit(version[start + 7])
        else {
            throw .malformed("The request line must end in HTTP/1.1 or HTTP/1.0.")
        }
        guard version[start + 5] == UInt8(ascii: "1") else {
            throw .unsupportedVersion("Only HTTP/1.1 and HTTP/1.0 are served here.")
        }
        return version[start + 7] == UInt8(ascii: "0") ? 0 : 1
    }

    /// One `Content-Length` field (possibly a list of equal values), agreeing with `previous`.
    private static func contentLength(_ value: Slice<UnsafeRawBufferPointer>, previous: Framing?) throws(WireError)
        -> Framing
    {
        var length: Int?
        if case .length(let earlier) = previous { length = earlier }
        for item in FieldLine.elements(of: value, omittingEmpty: false) {
            // At most 18 digits: the value fits in an Int.
            guard !item.isEmpty, item.count <= 18, item.allSatisfy(FieldLine.isDigit) else {
                throw .malformed(badLength)
            }
            let parsed = item.reduce(0) { $0 * 10 + Int($1 - UInt8(ascii: "0")) }
            guard length == nil || length == parsed else { throw .malformed(badLength) }
            length = parsed
        }
        return .length(length ?? 0)
    }

    private static let badLength = "Content-Length must be one non-negative decimal number."

    /// The framing of a request with `Transfer-Encoding`, whose elements are `codings`.
    private static func chunkedFraming(
        _ codings: [Slice<UnsafeRawBufferPointer>], minorVersion: Int, hasLength: Bool
    ) throws(WireError) -> Framing {
        // Both at once is how requests are smuggled past proxies (RFC 9112 §6.3): refused.
        guard !hasLength else {
            throw .malformed("A request may not carry both Transfer-Encoding and Content-Length.")
        }
        guard minorVersion == 1 else { throw .malformed("HTTP/1.0 requests cannot use Transfer-Encoding.") }
        guard codings.count == 1, Grammar.equalsIgnoringCase(codings[0], "chunked".utf8) else {
            throw .unsupportedTransferCoding("Only the chunked transfer coding is accepted on request bodies.")
        }
        return .chunked
    }

    /// The byte that ends a line.
    public static let lineFeed = FieldLine.lineFeed
    static let carriageReturn = FieldLine.carriageReturn
}
