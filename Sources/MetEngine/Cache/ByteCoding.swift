import Foundation

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

/// Reads what `ByteWriter` wrote, from memory the caller keeps valid while the reader is used
/// (an array's `withUnsafeBytes`, an SQLite row until its statement steps on). Every read checks
/// the bytes left and fails with nil rather than trapping, so a truncated or damaged record is
/// refused, never misread past its end; what it returns is copied out of that memory.
package struct ByteReader {
    private let bytes: UnsafeRawBufferPointer
    package private(set) var offset: Int
    /// Where reading stops: the bytes from here on are not the reader's (a record's checksum).
    private let end: Int

    /// Reads `bytes[offset..<end]`, `end` being at most `bytes.count` (all of them when nil).
    package init(_ bytes: UnsafeRawBufferPointer, from offset: Int = 0, to end: Int? = nil) {
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
        defer { offset += 8 }
        return Int64(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: Int64.self))
    }

    package mutating func double() -> Double? { integer().map { Double(bitPattern: UInt64(bitPattern: $0)) } }

    package mutating func length() -> Int? {
        guard end - offset >= 4 else { return nil }
        defer { offset += 4 }
        return Int(UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt32.self)))
    }

    package mutating func blob() -> [UInt8]? {
        guard let count = length(), end - offset >= count else { return nil }
        defer { offset += count }
        return Array(UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + count]))
    }

    /// A string, refused (nil) unless it is valid UTF-8. ASCII (most of the Met's text) is taken
    /// as it is; anything else is validated by `String(validating:as:)`, whose unspecialized
    /// generic path looks up type metadata on every call (3 % of a disk hit's CPU when it read
    /// every string).
    package mutating func string() -> String? {
        guard let count = length(), end - offset >= count else { return nil }
        defer { offset += count }
        let text = UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + count]).assumingMemoryBound(to: UInt8.self)
        return Self.isASCII(text) ? String(decoding: text, as: UTF8.self) : String(validating: text, as: UTF8.self)
    }

    /// Reads the next string's length and bytes and whether `matches` holds for those bytes,
    /// without making a `String`: for a member whose value the reader knows already. Reads
    /// nothing when they are not there or do not match.
    package mutating func string(where matches: (UnsafeRawBufferPointer) -> Bool) -> Bool {
        let start = offset
        guard let count = length(), end - offset >= count,
            matches(UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + count]))
        else {
            offset = start
            return false
        }
        offset += count
        return true
    }

    /// Whether every byte is below 0x80, eight at a time.
    private static func isASCII(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        let raw = UnsafeRawBufferPointer(bytes)
        var index = 0
        var seen: UInt64 = 0
        while index + 8 <= raw.count {
            seen |= raw.loadUnaligned(fromByteOffset: index, as: UInt64.self)
            index += 8
        }
        while index < raw.count {
            seen |= UInt64(raw[index])
            index += 1
        }
        return seen & 0x8080_8080_8080_8080 == 0
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

extension UnsafeRawBufferPointer {
    /// Whether these bytes are exactly `other` (a string's `utf8`, or a part of it): one `memcmp`
    /// where `other` keeps its bytes (a small string's, on the stack). A generic `elementsEqual`
    /// walked both through their iterators, a byte at a time, on every disk and Redis hit.
    package func holds(_ other: some Collection<UInt8>) -> Bool {
        other.withContiguousStorageIfAvailable { other in
            other.count == count && (count == 0 || memcmp(baseAddress!, other.baseAddress!, count) == 0)
        } ?? elementsEqual(other)
    }
}
