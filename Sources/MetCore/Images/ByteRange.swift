/// A `Range` request of one byte range (RFC 9110 §14.1.2): `bytes=first-last`, `bytes=first-`, or
/// `bytes=-suffix`. Several ranges, another unit, or bytes that are not the grammar's make no
/// `ByteRange`: the field is then ignored and the whole picture sent, as §14.2 allows.
struct ByteRange: Sendable, Equatable {
    enum Spec: Sendable, Equatable {
        /// From `first` to `last` (inclusive), or to the end when `last` is nil.
        case from(first: Int, last: Int?)
        /// The last `length` bytes.
        case suffix(length: Int)
    }

    let spec: Spec

    /// The range a `Range` field value asks for; nil when the field is to be ignored.
    init?(_ value: String) {
        var text = Substring(value).trimmingSpaces()
        guard text.lowercased().hasPrefix("bytes=") else { return nil }
        text = text.dropFirst("bytes=".count).trimmingSpaces()
        guard !text.contains(","), let dash = text.firstIndex(of: "-") else { return nil }
        let head = text[..<dash]
        let tail = text[text.index(after: dash)...]
        if head.isEmpty {
            guard let length = Self.digits(tail) else { return nil }
            spec = .suffix(length: length)
        } else {
            guard let first = Self.digits(head) else { return nil }
            if tail.isEmpty {
                spec = .from(first: first, last: nil)
            } else {
                guard let last = Self.digits(tail), last >= first else { return nil }
                spec = .from(first: first, last: last)
            }
        }
    }

    /// The bytes of a representation of `length` bytes this range selects, as offsets; nil when
    /// it selects none (a 416).
    func resolved(length: Int) -> ClosedRange<Int>? {
        switch spec {
        case .from(let first, let last):
            guard first < length else { return nil }
            return first...min(last ?? (length - 1), length - 1)
        case .suffix(let count):
            guard count > 0, length > 0 else { return nil }
            return max(0, length - count)...(length - 1)
        }
    }

    /// 1 to 18 ASCII digits (more would overflow), as a number.
    private static func digits(_ text: Substring) -> Int? {
        guard (1...18).contains(text.utf8.count), text.utf8.allSatisfy({ (0x30...0x39).contains($0) }) else {
            return nil
        }
        return Int(text)
    }
}
