/// Builds small JSON documents straight into bytes, without Foundation's serializer (which costs
/// hundreds of microseconds per document on Linux). For problem documents, `/health` and
/// projections; the caller is responsible for calling the members in a valid order.
public struct JSONWriter: Sendable {
    /// The document so far.
    public private(set) var bytes: [UInt8] = []
    private var needsComma = false

    /// - Parameter capacity: bytes to reserve, when the caller knows about how long the document
    ///   will be (it saves regrowing large documents).
    public init(capacity: Int = 256) { bytes.reserveCapacity(capacity) }

    public mutating func beginObject() {
        separate()
        bytes.append(UInt8(ascii: "{"))
        needsComma = false
    }
    public mutating func endObject() {
        bytes.append(UInt8(ascii: "}"))
        needsComma = true
    }
    public mutating func beginArray() {
        separate()
        bytes.append(UInt8(ascii: "["))
        needsComma = false
    }
    public mutating func endArray() {
        bytes.append(UInt8(ascii: "]"))
        needsComma = true
    }

    /// Writes `"name":` and leaves the writer ready for the value.
    public mutating func key(_ name: String) {
        separate()
        appendQuoted(name)
        bytes.append(UInt8(ascii: ":"))
        needsComma = false
    }

    public mutating func string(_ value: String) {
        separate()
        appendQuoted(value)
        needsComma = true
    }
    public mutating func int(_ value: Int) {
        separate()
        bytes.append(contentsOf: String(value).utf8)
        needsComma = true
    }
    public mutating func bool(_ value: Bool) {
        separate()
        bytes.append(contentsOf: (value ? "true" : "false").utf8)
        needsComma = true
    }
    public mutating func null() {
        separate()
        bytes.append(contentsOf: "null".utf8)
        needsComma = true
    }

    /// Writes a finite number; non-finite values (not JSON) become null.
    public mutating func double(_ value: Double) {
        guard value.isFinite else { return null() }
        separate()
        bytes.append(contentsOf: String(value).utf8)
        needsComma = true
    }

    /// Copies an already-encoded JSON value verbatim. Inlinable, so that each caller's module specializes it for its collection: unspecialized,
    /// every byte would go through the collection's witness table.
    @inlinable
    public mutating func raw<Bytes: Collection<UInt8>>(_ json: Bytes) {
        let appended: Void? = json.withContiguousStorageIfAvailable { append(raw: $0) }
        if appended == nil { Array(json).withUnsafeBufferPointer { append(raw: $0) } }
    }

    /// `raw(_:)` over bytes in memory.
    @usableFromInline
    mutating func append(raw json: UnsafeBufferPointer<UInt8>) {
        separate()
        bytes.append(contentsOf: json)
        needsComma = true
    }

    public mutating func member(_ name: String, string value: String) {
        key(name)
        string(value)
    }
    public mutating func member(_ name: String, int value: Int) {
        key(name)
        int(value)
    }
    public mutating func member(_ name: String, bool value: Bool) {
        key(name)
        bool(value)
    }

    private mutating func separate() {
        if needsComma { bytes.append(UInt8(ascii: ",")) }
    }

    private mutating func appendQuoted(_ text: String) {
        bytes.append(UInt8(ascii: "\""))
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""): bytes.append(contentsOf: [0x5C, 0x22])
            case UInt8(ascii: "\\"): bytes.append(contentsOf: [0x5C, 0x5C])
            case 0x0A: bytes.append(contentsOf: [0x5C, UInt8(ascii: "n")])
            case 0x0D: bytes.append(contentsOf: [0x5C, UInt8(ascii: "r")])
            case 0x09: bytes.append(contentsOf: [0x5C, UInt8(ascii: "t")])
            case 0..<0x20:
                let hex = Array("0123456789abcdef".utf8)
                bytes.append(contentsOf: [
                    0x5C, UInt8(ascii: "u"), 0x30, 0x30, hex[Int(byte >> 4)], hex[Int(byte & 0xF)],
                ])
            default: bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }
}
