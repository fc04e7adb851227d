/// A 64-bit checksum of bytes, eight at a time (about 0.2 ns a byte): what a cache record carries
/// so that a torn, truncated or flipped record is refused. It detects accidents (a write cut off by
/// `kill -9`, a damaged sector, a flipped byte), not tampering: it is not cryptographic.
package enum Checksum {
    package static func of(_ bytes: ArraySlice<UInt8>) -> UInt64 {
        bytes.withUnsafeBytes { raw -> UInt64 in
            var hash: UInt64 = 0x9E37_79B9_7F4A_7C15 ^ UInt64(raw.count)
            var offset = 0
            while offset + 8 <= raw.count {
                hash = mix(hash ^ UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self)))
                offset += 8
            }
            var tail: UInt64 = 0
            var shift: UInt64 = 0
            while offset < raw.count {
                tail |= UInt64(raw[offset]) << shift
                shift += 8
                offset += 1
            }
            return mix(mix(hash ^ tail))
        }
    }

    /// One round of a 64-bit finaliser (multiply, xor-shift): every input bit reaches every output bit.
    private static func mix(_ value: UInt64) -> UInt64 {
        var value = value &* 0xBF58_476D_1CE4_E5B9
        value ^= value >> 31
        return value &* 0x94D0_49BB_1331_11EB
    }
}
