/// A WebP's size, from its first chunk: `VP8 ` (lossy, RFC 6386 §9.1), `VP8L` (lossless) or
/// `VP8X` (extended, the canvas size), as the WebP container specification lays them out.
enum WebPHeader {
    static func size(_ bytes: ByteReader) -> Result<(Int, Int), ImageHeaderError> {
        guard let riffLength = bytes.integer(at: 4, width: 4, little: true) else {
            return .failure(.truncated("WebP ends inside its RIFF header"))
        }
        guard riffLength + 8 == bytes.count else {
            return riffLength + 8 > bytes.count
                ? .failure(.truncated("WebP of \(bytes.count) bytes declares \(riffLength + 8)"))
                : .failure(.malformed("WebP of \(bytes.count) bytes declares \(riffLength + 8)"))
        }
        if bytes.matches(Array("VP8 ".utf8), at: 12) {
            guard bytes.matches([0x9D, 0x01, 0x2A], at: 23) else {
                return .failure(.malformed("VP8 without its start code"))
            }
            guard let width = bytes.integer(at: 26, width: 2, little: true),
                let height = bytes.integer(at: 28, width: 2, little: true)
            else { return .failure(.truncated("WebP ends inside VP8's header")) }
            return .success((width & 0x3FFF, height & 0x3FFF))
        }
        if bytes.matches(Array("VP8L".utf8), at: 12) {
            guard bytes.byte(at: 20) == 0x2F else { return .failure(.malformed("VP8L without its signature")) }
            guard let bits = bytes.integer(at: 21, width: 4, little: true) else {
                return .failure(.truncated("WebP ends inside VP8L's header"))
            }
            return .success(((bits & 0x3FFF) + 1, (bits >> 14 & 0x3FFF) + 1))
        }
        if bytes.matches(Array("VP8X".utf8), at: 12) {
            guard let width = bytes.integer(at: 24, width: 3, little: true),
                let height = bytes.integer(at: 27, width: 3, little: true)
            else { return .failure(.truncated("WebP ends inside VP8X's header")) }
            return .success((width + 1, height + 1))
        }
        return .failure(.malformed("WebP whose first chunk is not VP8, VP8L or VP8X"))
    }
}
