/// Bounds-checked reads of big- and little-endian integers from a file's bytes: every read past
/// the end is nil, never a trap. Valid while the buffer it wraps is.
struct ByteReader {
    private let bytes: UnsafeBufferPointer<UInt8>

    init(_ bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
    }

    var count: Int { bytes.count }

    func byte(at offset: Int) -> UInt8? {
        offset >= 0 && offset < bytes.count ? bytes[offset] : nil
    }

    /// The `width`-byte unsigned integer at `offset` (1 to 4 bytes), big-endian unless `little`.
    func integer(at offset: Int, width: Int, little: Bool = false) -> Int? {
        guard offset >= 0, width > 0, width <= 4, offset <= bytes.count - width else { return nil }
        var value = 0
        for index in 0..<width {
            let byte = Int(bytes[little ? offset + width - 1 - index : offset + index])
            value = value << 8 | byte
        }
        return value
    }

    func starts(with prefix: [UInt8]) -> Bool { matches(prefix, at: 0) }

    func matches(_ expected: [UInt8], at offset: Int) -> Bool {
        guard offset >= 0, offset <= bytes.count - expected.count else { return false }
        for index in expected.indices where bytes[offset + index] != expected[index] { return false }
        return true
    }

    /// Whether `expected` occurs within the last `window` bytes.
    func tail(contains expected: [UInt8], within window: Int) -> Bool {
        let start = max(0, bytes.count - window)
        guard bytes.count - start >= expected.count else { return false }
        for offset in start...(bytes.count - expected.count) where matches(expected, at: offset) { return true }
        return false
    }
}
