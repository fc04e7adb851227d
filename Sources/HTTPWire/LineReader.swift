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

    /// The next line; nil at the end of the bytes. Throws `malformed` for a line that ends in a
    /// bare LF or not at all.
    mutating func next() throws(WireError) -> Slice<UnsafeRawBufferPointer>? {
        guard position < bytes.count else { return nil }
        guard let end = bytes[position...].firstIndex(of: FieldLine.lineFeed), end > position,
            bytes[end - 1] == FieldLine.carriageReturn
        else {
            throw .malformed("Every line of the request head must end in CRLF.")
        }
        let line = bytes[position..<(end - 1)]
        position = end + 1
        return line
    }
}
