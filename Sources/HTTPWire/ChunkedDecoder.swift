import HTTPGrammar

/// Decodes a request body sent with `Transfer-Encoding: chunked` (RFC 9112 §7.1), incrementally:
/// each call takes the bytes received since the last one and keeps its place, so a body is read
/// once however it is split, and at most one line is ever waited on. Strict: every line ends in
/// CRLF (a bare LF or CR is refused), a chunk size is hex digits, optional whitespace and
/// well-formed extensions (`;name[=token|"quoted"]`, ignored), and trailer lines are well-formed
/// field lines (ignored). A value type owned by one connection; not thread-safe.
public struct ChunkedDecoder: Sendable {
    /// Where the decoder is in the body.
    private enum State: Equatable {
        /// Waiting for a chunk-size line.
        case size
        /// Inside a chunk's data, with this many bytes still to come.
        case data(remaining: Int)
        /// After a chunk's data, waiting for its CRLF.
        case dataEnd
        /// After the last chunk, in the trailer section (ended by an empty line).
        case trailer
        /// The body is complete; nothing more is consumed.
        case done
    }

    /// The longest chunk-size line, extensions and CRLF included, in bytes.
    public static let maxSizeLineBytes = 4_096

    /// The body decoded so far; the whole body once `isComplete`.
    public private(set) var body: [UInt8] = []
    private var state = State.size
    /// Bytes of the current, incomplete line already searched for its LF.
    private var scanned = 0
    /// Bytes of trailer section consumed so far.
    private var trailerBytes = 0
    private let limit: Int
    private let trailerLimit: Int

    /// - Parameters:
    ///   - limit: the most decoded body bytes accepted.
    ///   - trailerLimit: the most bytes of trailer section accepted, its final CRLF included.
    public init(limit: Int, trailerLimit: Int) {
        self.limit = limit
        self.trailerLimit = trailerLimit
    }

    /// Whether the last chunk and the trailer section have been read.
    public var isComplete: Bool { state == .done }

    /// Decodes what it can of `bytes`, the bytes that follow those consumed by earlier calls, and
    /// returns how many it consumed; the caller drops them and passes the rest (and whatever
    /// arrives next) to the next call. An incomplete line is left unconsumed. Nothing past the
    /// end of the body is consumed.
    ///
    /// - Throws: `malformed` for a bad chunk-size line, chunk extension, chunk ending or trailer
    ///   line; `bodyTooLarge` past `limit`; `trailerTooLarge` for a trailer section past
    ///   `trailerLimit`. After a throw the decoder must not be used again.
    public mutating func decode(_ bytes: UnsafeRawBufferPointer) throws(WireError) -> Int {
        var position = 0
        while true {
            switch state {
            case .done:
                return position
            case .size:
                guard let line = try nextLine(bytes, from: position, bound: Self.maxSizeLineBytes) else {
                    return position
                }
                let size = try Self.chunkSize(bytes[position..<line.end], room: limit - body.count)
                position = line.next
                state = size == 0 ? .trailer : .data(remaining: size)
            case .data(let remaining):
                let taken = min(remaining, bytes.count - position)
                body.append(contentsOf: bytes[position..<(position + taken)])
                position += taken
                guard taken == remaining else {
                    state = .data(remaining: remaining - taken)
                    return position
                }
                state = .dataEnd
            case .dataEnd:
                let available = bytes.count - position
                if available >= 1 && bytes[position] != FieldLine.carriageReturn
                    || available >= 2 && bytes[position + 1] != FieldLine.lineFeed
                {
                    throw .malformed("A chunk of the request body is not followed by CRLF.")
                }
                guard available >= 2 else { return position }
                position += 2
                state = .size
            case .trailer:
                guard let line = try nextLine(bytes, from: position, bound: trailerLimit - trailerBytes) else {
                    return position
                }
                trailerBytes += line.next - position
                if line.end == position {
                    state = .done
                } else {
                    _ = try FieldLine.split(bytes[position..<line.end])
                }
                position = line.next
            }
        }
    }

    /// The CRLF-ended line starting at `from`: where its content ends and where the next line
    /// starts; nil while it is incomplete. Resumes the search where the last call left off.
    private mutating func nextLine(_ bytes: UnsafeRawBufferPointer, from: Int, bound: Int) throws(WireError) -> (
        end: Int, next: Int
    )? {
        var index = from + scanned
        while index < bytes.count && index - from < bound {
            let byte = bytes[index]
            if byte == FieldLine.lineFeed {
                guard index > from, bytes[index - 1] == FieldLine.carriageReturn else {
                    throw .malformed("A line of the chunked request body ends in a bare LF.")
                }
                scanned = 0
                return (index - 1, index + 1)
            }
            if index > from && bytes[index - 1] == FieldLine.carriageReturn {
                throw .malformed("A line of the chunked request body has a bare CR.")
            }
            index += 1
        }
        guard index - from < bound else {
            throw state == .trailer
                ? WireError.trailerTooLarge(
                    "The trailer fields of the request body take more than \(trailerLimit) bytes.")
                : WireError.malformed("A chunk size line is longer than \(Self.maxSizeLineBytes) bytes.")
        }
        scanned = index - from
        return nil
    }

    /// The size on a chunk-size line (without its CRLF): `1*HEXDIG BWS *( ";" BWS name
    /// [ BWS "=" BWS ( token / quoted-string ) ] BWS )`. A size over `room` is `body_too_large`.
    private static func chunkSize(_ line: Slice<UnsafeRawBufferPointer>, room: Int) throws(WireError) -> Int {
        var index = line.startIndex
        var size = 0
        var overflowed = false
        while index < line.endIndex, let digit = Grammar.hexValue(line[index]) {
            if size > Int.max >> 4 { overflowed = true } else { size = size << 4 | Int(digit) }
            index += 1
        }
        guard index > line.startIndex else { throw malformedSize }
        func skipWhitespace() {
            while index < line.endIndex && (line[index] == FieldLine.space || line[index] == FieldLine.tab) {
                index += 1
            }
        }
        func skipToken() throws(WireError) {
            let start = index
            while index < line.endIndex && Grammar.isTokenByte(line[index]) { index += 1 }
            guard index > start else { throw malformedExtension }
        }
        skipWhitespace()
        while index < line.endIndex {
            guard line[index] == UInt8(ascii: ";") else { throw malformedSize }
            index += 1
            skipWhitespace()
            try skipToken()
            skipWhitespace()
            if index < line.endIndex && line[index] == UInt8(ascii: "=") {
                index += 1
                skipWhitespace()
                if index < line.endIndex && line[index] == UInt8(ascii: "\"") {
                    index = try endOfQuotedString(line, from: index)
                } else {
                    try skipToken()
                }
                skipWhitespace()
            }
        }
        guard !overflowed, size <= room else {
            throw .bodyTooLarge("The request body is larger than the server accepts.")
        }
        return size
    }

    /// Just past the RFC 9110 `quoted-string` that starts at `from` (its opening quote).
    private static func endOfQuotedString(_ line: Slice<UnsafeRawBufferPointer>, from: Int) throws(WireError) -> Int {
        var index = from + 1
        while index < line.endIndex {
            let byte = line[index]
            switch byte {
            case UInt8(ascii: "\""):
                return index + 1
            case UInt8(ascii: "\\"):
                guard index + 1 < line.endIndex, isQuotable(line[index + 1]) else { throw malformedExtension }
                index += 2
            default:
                guard isQuotable(byte) else { throw malformedExtension }
                index += 1
            }
        }
        throw malformedExtension
    }

    /// HTAB, SP, VCHAR or obs-text: what may stand in a quoted string (`"` and `\` aside).
    private static func isQuotable(_ byte: UInt8) -> Bool {
        byte == FieldLine.tab || byte >= FieldLine.space && byte != 0x7F
    }

    private static let malformedSize = WireError.malformed("A chunk size line of the request body is not a hex number.")
    private static let malformedExtension = WireError.malformed(
        "A chunk extension of the request body is not ;name or ;name=value.")
}
