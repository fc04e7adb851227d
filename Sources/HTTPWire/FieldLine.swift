import HTTPGrammar

/// The byte-level grammar shared by the request head and chunked trailers (RFC 9110 §5,
/// RFC 9112 §2.2 and §5): field lines and the comma-separated lists in their values.
enum FieldLine {
    /// Splits one field line (without its CRLF) into name and value, the value trimmed of
    /// surrounding spaces and tabs. Refuses obs-fold (a line starting with whitespace), a name that
    /// is not a token or is followed by whitespace, and a value with control characters.
    static func split(_ line: Slice<UnsafeRawBufferPointer>) throws(WireError) -> (
        name: Slice<UnsafeRawBufferPointer>, value: Slice<UnsafeRawBufferPointer>
    ) {
        if line.first == space || line.first == tab {
            throw .malformed("Header field line folding is obsolete and not accepted.")
        }
        guard let colon = line.firstIndex(of: UInt8(ascii: ":")), colon > line.startIndex,
            line[..<colon].allSatisfy(Grammar.isTokenByte)
        else {
            throw .malformed("A header field line must be NAME: VALUE, with a token for the name.")
        }
        let value = trimmed(line[(colon + 1)...])
        guard value.allSatisfy({ $0 >= space && $0 != 0x7F || $0 == tab }) else {
            throw .malformed("A header field value contains control characters.")
        }
        return (line[..<colon], value)
    }

    /// The elements of a comma-separated field value (RFC 9110 §5.6.1), each trimmed of spaces and
    /// tabs. `omittingEmpty`: elements with no byte at all between their commas are left out (one
    /// of only whitespace is kept, empty once trimmed).
    static func elements(of value: Slice<UnsafeRawBufferPointer>, omittingEmpty: Bool) -> [Slice<
        UnsafeRawBufferPointer
    >] {
        value.split(separator: UInt8(ascii: ","), omittingEmptySubsequences: omittingEmpty).map(trimmed)
    }

    /// `bytes` without leading and trailing spaces and tabs (RFC 9110 `OWS`).
    private static func trimmed(_ bytes: Slice<UnsafeRawBufferPointer>) -> Slice<UnsafeRawBufferPointer> {
        var bytes = bytes
        while let first = bytes.first, first == space || first == tab { bytes.removeFirst() }
        while let last = bytes.last, last == space || last == tab { bytes.removeLast() }
        return bytes
    }

    static func isDigit(_ byte: UInt8) -> Bool { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) }

    static let lineFeed = UInt8(ascii: "\n")
    static let carriageReturn = UInt8(ascii: "\r")
    static let space = UInt8(ascii: " ")
    static let tab = UInt8(ascii: "\t")
}
