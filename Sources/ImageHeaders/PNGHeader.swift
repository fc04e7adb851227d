/// A PNG's size, from its `IHDR` chunk, which must come first (PNG §11.2.2).
enum PNGHeader {
    static func size(_ bytes: ByteReader) -> Result<(Int, Int), ImageHeaderError> {
        guard let length = bytes.integer(at: 8, width: 4), bytes.matches(Array("IHDR".utf8), at: 12) else {
            return bytes.count < 16
                ? .failure(.truncated("PNG ends before IHDR")) : .failure(.malformed("PNG without IHDR first"))
        }
        guard length == 13 else { return .failure(.malformed("PNG IHDR of \(length) bytes")) }
        guard let width = bytes.integer(at: 16, width: 4), let height = bytes.integer(at: 20, width: 4) else {
            return .failure(.truncated("PNG ends inside IHDR"))
        }
        // PNG §11.2.2: each side at most 2^31 − 1.
        guard width <= Int(Int32.max), height <= Int(Int32.max) else {
            return .failure(.malformed("PNG of \(width) × \(height) pixels"))
        }
        // The last chunk: IEND, empty, with its fixed CRC.
        guard bytes.matches(Array("IEND".utf8) + [0xAE, 0x42, 0x60, 0x82], at: bytes.count - 8) else {
            return .failure(.truncated("PNG does not end with IEND"))
        }
        return .success((width, height))
    }
}
