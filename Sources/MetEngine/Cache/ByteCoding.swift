/// Appends values to a byte array in a fixed little-endian layout: the encoding of cache records
/// (see `CacheEntry.record`). Lengths are 32-bit; an optional is a presence byte and its value.
package struct ByteWriter {
    package private(set) var bytes: [UInt8] = []

    package init(capacity: Int) { bytes.reserveCapacity(capacity) }

    package mutating func byte(_ value: UInt8) { bytes.append(value) }

    package mutating func integer(_ value: Int64) {
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }

    package mutating func double(_ value: Double) { integer(Int64(bitPattern: value.bitPattern)) }

    package mutating func length(_ value: Int) {
        withUnsafeBytes(of: UInt32(truncatingIfNeeded: value).littleEndian) { bytes.append(contentsOf: $0) }
    }

    package mutating func blob(_ value: [UInt8]) {
        length(value.count)
        bytes.append(contentsOf: value)
    }

    package mutating func string(_ value: String) {
        length(value.utf8.count)
        bytes.append(contentsOf: value.utf8)
    }

    package mutating func optional<Value>(_ value: Value?, _ write: (inout ByteWriter, Value) -> Void) {
        guard let value else { return byte(0) }
        byte(1)
        write(&self, value)
    }
}

/// Reads what `ByteWriter` wrote. Every read checks the bytes left and fails with nil rather than
/// trapping, so a truncated or damaged record is refused, never misread past its end.
package struct ByteReader {
    private let bytes: [UInt8]
    package private(set) var offset: Int
    /// Where reading stops: the bytes from here on are not the reader's (a record's checksum).
    private let end: Int

    /// Reads `bytes[offset..<end]`, `end` being at most `bytes.count` (all of them when nil).
    package init(_ bytes: [UInt8], from offset: Int = 0, to end: Int? = nil) {
        self.bytes = bytes
        self.end = min(end ?? bytes.count, bytes.count)
        self.offset = min(offset, self.end)
    }

    package var isAtEnd: Bool { offset == end }

    package mutating func byte() -> UInt8? {
        guard offset < end else { return nil }
        defer { offset += 1 }
        return bytes[offset]
    }

    package mutating func integer() -> Int64? {
        guard end - offset >= 8 else { return nil }
        var value: UInt64 = 0
        for index in (0..<8).reversed() { value = value << 8 | UInt64(bytes[offset + index]) }
        offset += 8
        return Int64(bitPattern: value)
    }

    package mutating func double() -> Double? { integer().map { Double(bitPattern: UInt64(bitPattern: $0)) } }

    package mutating func length() -> Int? {
        guard end - offset >= 4 else { return nil }
        var value: UInt32 = 0
        for index in (0..<4).reversed() { value = value << 8 | UInt32(bytes[offset + index]) }
        offset += 4
        return Int(value)
    }

    package mutating func blob() -> [UInt8]? {
        guard let count = length(), end - offset >= count else { return nil }
        defer { offset += count }
        return Array(bytes[offset..<offset + count])
    }

    /// A string, refused (nil) unless it is valid UTF-8. Validated through a buffer pointer: on an
    /// array slice, `String(validating:as:)` takes a generic path at twice the cost.
    package mutating func string() -> String? {
        guard let count = length(), end - offset >= count else { return nil }
        defer { offset += count }
        return bytes.withUnsafeBufferPointer { buffer in
            String(validating: UnsafeBufferPointer(rebasing: buffer[offset..<offset + count]), as: UTF8.self)
        }
    }

    /// The optional `read` reads after a presence byte; `.some(nil)` for an absent value, nil when
    /// the bytes are damaged.
    package mutating func optional<Value>(_ read: (inout ByteReader) -> Value?) -> Value?? {
        switch byte() {
        case 0: return .some(nil)
        case 1: return read(&self).map { .some($0) }
        default: return nil
        }
    }
}
