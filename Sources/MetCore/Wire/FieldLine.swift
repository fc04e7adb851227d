import HTTPGrammar

/// The byte-level grammar shared by the request head and chunked trailers (RFC 9110 §5,
/// RFC 9112 §2.2 and §5): strict CRLF lines, tokens and field lines.
enum FieldLine {
    /// Splits one field line (without its CRLF) into name and value, the value trimmed of
    /// surrounding spaces and tabs. Refuses obs-fold (a line starting with whitespace), a name that
    /// is not a token or is followed by whitespace, and a value with control characters.
    static func split(_ line: Slice<UnsafeRawBufferPointer>) throws(Problem) -> (
        name: Slice<UnsafeRawBufferPointer>, value: Slice<UnsafeRawBufferPointer>
    ) {
        if line.first == space || line.first == tab {
            throw Problem(.malformedRequest, "Header field line folding is obsolete and not accepted.")
        }
        guard let colon = line.firstIndex(of: UInt8(ascii: ":")), colon > line.startIndex,
            line[..<colon].allSatisfy(Grammar.isTokenByte)
        else {
            throw Problem(.malformedRequest, "A header field line must be NAME: VALUE, with a token for the name.")
        }
        var value = line[(colon + 1)...]
        while let first = value.first, first == space || first == tab { value.removeFirst() }
        while let last = value.last, last == space || last == tab { value.removeLast() }
        guard value.allSatisfy({ $0 >= space && $0 != 0x7F || $0 == tab }) else {
            throw Problem(.malformedRequest, "A header field value contains control characters.")
        }
        return (line[..<colon], value)
    }

    static func isDigit(_ byte: UInt8) -> Bool { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) }

    static let lineFeed = UInt8(ascii: "\n")
    static let carriageReturn = UInt8(ascii: "\r")
    static let space = UInt8(ascii: " ")
    static let tab = UInt8(ascii: "\t")
}

/// Splits a complete request head into lines, each of which must end in CRLF (RFC 9112 §2.2:
/// a bare LF is refused, like llhttp does by default, because a proxy in front that reads lines
/// differently would see different requests). No copies: the lines are slices of the buffer,
/// without their CRLF.
struct LineReader {
    private let bytes: UnsafeRawBufferPointer
    private var position = 0

    init(_ bytes: UnsafeRawBufferPointer) {
        self.bytes = bytes
    }

    /// The next line; nil at the end of the bytes. Throws `malformed_request` for a line that ends
    /// in a bare LF or not at all.
    mutating func next() throws(Problem) -> Slice<UnsafeRawBufferPointer>? {
        guard position < bytes.count else { return nil }
        guard let end = bytes[position...].firstIndex(of: FieldLine.lineFeed), end > position,
            bytes[end - 1] == FieldLine.carriageReturn
        else {
            throw Problem(.malformedRequest, "Every line of the request head must end in CRLF.")
        }
        let line = bytes[position..<(end - 1)]
        position = end + 1
        return line
    }
}
