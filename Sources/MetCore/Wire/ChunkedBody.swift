/// Decodes a request body sent with `Transfer-Encoding: chunked` (RFC 9112 §7.1). Pure; the
/// HTTP layer calls it again with more bytes until it is complete.
public enum ChunkedBody {
    /// Decodes the chunked body at the start of `bytes`.
    ///
    /// - Parameter limit: the most decoded bytes accepted.
    /// - Returns: the decoded body and how many bytes of `bytes` it took (trailer fields
    ///   included, then ignored), or nil when the body is not complete yet.
    /// - Throws: `body_too_large` past `limit`; `malformed_request` for a bad chunk size line or a
    ///   chunk not followed by CRLF.
    public static func decode(_ bytes: UnsafeRawBufferPointer, limit: Int) throws(Problem) -> (
        body: [UInt8], consumed: Int
    )? {
        var body: [UInt8] = []
        var position = 0
        while true {
            guard let lineEnd = lineEnd(in: bytes, from: position) else { return nil }
            let size = try chunkSize(bytes[position..<lineEnd.start])
            position = lineEnd.next
            if size == 0 { break }
            guard body.count + size <= limit else {
                throw Problem(.bodyTooLarge, "The request body is larger than \(limit) bytes.")
            }
            guard bytes.count - position >= size + 2 else { return nil }
            body.append(contentsOf: bytes[position..<(position + size)])
            position += size
            if bytes[position] == RequestHead.carriageReturn { position += 1 }
            guard bytes[position] == RequestHead.lineFeed else {
                throw Problem(.malformedRequest, "A chunk of the request body is not followed by CRLF.")
            }
            position += 1
        }
        // Trailer fields, up to an empty line.
        while true {
            guard let lineEnd = lineEnd(in: bytes, from: position) else { return nil }
            let isEmpty = lineEnd.start == position
            position = lineEnd.next
            if isEmpty { return (body, position) }
        }
    }

    /// The end of the line starting at `from`: where its content stops (before CR LF or LF) and
    /// where the next line begins.
    private static func lineEnd(in bytes: UnsafeRawBufferPointer, from: Int) -> (start: Int, next: Int)? {
        var index = from
        while index < bytes.count {
            if bytes[index] == RequestHead.lineFeed {
                let start = index > from && bytes[index - 1] == RequestHead.carriageReturn ? index - 1 : index
                return (start, index + 1)
            }
            index += 1
        }
        return nil
    }

    /// A chunk-size line: hex digits, then optional `;extensions`, which are ignored.
    private static func chunkSize(_ line: Slice<UnsafeRawBufferPointer>) throws(Problem) -> Int {
        var size = 0
        var digits = 0
        for byte in line {
            if byte == UInt8(ascii: ";") || byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") { break }
            guard let value = RequestTarget.hexValue(byte), digits < 15 else {
                throw Problem(.malformedRequest, "A chunk size line of the request body is not a hex number.")
            }
            size = size << 4 | Int(value)
            digits += 1
        }
        guard digits > 0 else {
            throw Problem(.malformedRequest, "A chunk size line of the request body is not a hex number.")
        }
        return size
    }
}
