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
    /// The request target as sent.
    public var target: String
    /// 0 for HTTP/1.0, 1 for HTTP/1.1.
    public var minorVersion: Int
    /// The header fields in the order sent, values trimmed of surrounding spaces and tabs.
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
    /// the head is not complete yet. Lines may end in CRLF or a bare LF. `start` is where an
    /// earlier call stopped looking (bytes before it are not searched again).
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

    /// Parses a complete head (everything up to and including its blank line). Empty lines before
    /// the request line are skipped, as RFC 9112 allows.
    ///
    /// - Throws: `malformed_request` (400) for anything that is not an HTTP/1.x request head, with
    ///   a detail naming what is wrong; `http_version_not_supported` (505) for another major
    ///   version; `transfer_coding_not_supported` (501) for a transfer coding other than chunked.
    public init(parsing bytes: UnsafeRawBufferPointer) throws(Problem) {
        var lines = LineReader(bytes)
        var requestLine = lines.next()
        while let line = requestLine, line.isEmpty { requestLine = lines.next() }
        guard let requestLine else { throw Self.malformed("The request has no request line.") }
        let space = UInt8(ascii: " ")
        guard let methodEnd = requestLine.firstIndex(of: space), methodEnd > requestLine.startIndex,
            let targetEnd = requestLine[(methodEnd + 1)...].firstIndex(of: space),
            requestLine[requestLine.startIndex..<methodEnd].allSatisfy(Self.isTokenByte)
        else {
            throw Self.malformed("The request line must be METHOD TARGET HTTP/1.1.")
        }
        let target = requestLine[(methodEnd + 1)..<targetEnd]
        guard !target.isEmpty, target.allSatisfy({ $0 > 0x20 && $0 != 0x7F }) else {
            throw Self.malformed("The request target is empty or contains spaces or control characters.")
        }
        minorVersion = try Self.minorVersion(requestLine[(targetEnd + 1)...])
        method = Self.string(requestLine[requestLine.startIndex..<methodEnd])
        self.target = Self.string(target)

        var headers = HTTPFields()
        var framing = Framing.length(0)
        var sawLength = false
        var sawCoding = false
        var closeRequested = false
        var keepAliveRequested = false
        var expectsContinue = false
        while let line = lines.next(), !line.isEmpty {
            let field = try Self.field(line)
            headers.append(field)
            switch field.name.utf8.count {
            case 6 where field.name.caseInsensitiveEquals("Expect"):
                expectsContinue = expectsContinue || field.value.caseInsensitiveEquals("100-continue")
            case 10 where field.name.caseInsensitiveEquals("Connection"):
                for token in field.value.split(separator: ",") {
                    let token = token.trimmingSpaces()
                    if token.caseInsensitiveEquals("close") { closeRequested = true }
                    if token.caseInsensitiveEquals("keep-alive") { keepAliveRequested = true }
                }
            case 14 where field.name.caseInsensitiveEquals("Content-Length"):
                framing = try Self.contentLength(field.value, previous: sawLength ? framing : nil)
                sawLength = true
            case 17 where field.name.caseInsensitiveEquals("Transfer-Encoding"):
                sawCoding = true
            default:
                break
            }
        }
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
        guard version.count == 8, version.starts(with: "HTTP/".utf8), isDigit(version[start + 5]),
            version[start + 6] == UInt8(ascii: "."), isDigit(version[start + 7])
        else {
            throw malformed("The request line must end in HTTP/1.1 or HTTP/1.0.")
        }
        guard version[start + 5] == UInt8(ascii: "1") else {
            throw Problem(.httpVersionNotSupported, "Only HTTP/1.1 and HTTP/1.0 are served here.")
        }
        return version[start + 7] == UInt8(ascii: "0") ? 0 : 1
    }

    private static func field(_ line: Slice<UnsafeRawBufferPointer>) throws(Problem) -> HTTPFields.Field {
        if line.first == UInt8(ascii: " ") || line.first == UInt8(ascii: "\t") {
            throw malformed("Header field line folding is obsolete and not accepted.")
        }
        guard let colon = line.firstIndex(of: UInt8(ascii: ":")), colon > line.startIndex,
            line[..<colon].allSatisfy(isTokenByte)
        else {
            throw malformed("A header field line must be NAME: VALUE, with a token for the name.")
        }
        var value = line[(colon + 1)...]
        while let first = value.first, first == 0x20 || first == 0x09 { value.removeFirst() }
        while let last = value.last, last == 0x20 || last == 0x09 { value.removeLast() }
        guard value.allSatisfy({ $0 >= 0x20 && $0 != 0x7F || $0 == 0x09 }) else {
            throw malformed("A header field value contains control characters.")
        }
        return HTTPFields.Field(name: string(line[..<colon]), value: string(value))
    }

    /// One `Content-Length` field (possibly a list of equal values), agreeing with `previous`.
    private static func contentLength(_ value: String, previous: Framing?) throws(Problem) -> Framing {
        var length: Int?
        if case .length(let earlier) = previous { length = earlier }
        for item in value.split(separator: ",", omittingEmptySubsequences: false) {
            let text = item.trimmingSpaces()
            guard !text.isEmpty, text.utf8.count <= 18, text.utf8.allSatisfy(isDigit), let parsed = Int(text),
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
        guard tokens.count == 1, tokens[0].trimmingSpaces().caseInsensitiveEquals("chunked") else {
            throw Problem(
                .transferCodingNotSupported, "Only the chunked transfer coding is accepted on request bodies.")
        }
        return .chunked
    }

    private static func malformed(_ detail: String) -> Problem {
        Problem(.malformedRequest, detail)
    }

    static func isDigit(_ byte: UInt8) -> Bool { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) }

    /// RFC 9110 `tchar`.
    static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"):
            true
        default:
            "!#$%&'*+-.^_`|~".utf8.contains(byte)
        }
    }

    public static let lineFeed = UInt8(ascii: "\n")
    static let carriageReturn = UInt8(ascii: "\r")
}

/// Splits bytes into lines ending in LF, dropping the LF and one CR before it. No copies: the
/// lines are slices of the buffer.
struct LineReader {
    private let bytes: UnsafeRawBufferPointer
    private var position = 0

    init(_ bytes: UnsafeRawBufferPointer) {
        self.bytes = bytes
    }

    mutating func next() -> Slice<UnsafeRawBufferPointer>? {
        guard position < bytes.count else { return nil }
        let end = bytes[position...].firstIndex(of: RequestHead.lineFeed) ?? bytes.count
        var line = bytes[position..<end]
        position = end + 1
        if line.last == RequestHead.carriageReturn { line.removeLast() }
        return line
    }
}
