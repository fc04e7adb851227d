import MetEngine

/// Request IDs (`X-Request-Id`): the client's own when it sends a usable one from this machine
/// (a proxy in front that made it; the loop passes nil for other clients, whose IDs could be
/// forged to confuse the log), else a new one of 16 hex digits. One per event loop, seeded at
/// random; loop thread only.
package struct RequestIDs {
    private var generator: SplitMix64

    /// The longest ID taken from a client.
    static let maxLength = 64

    package init(seed: UInt64 = UInt64.random(in: .min ... .max)) {
        generator = SplitMix64(seed: seed)
    }

    /// `given` when it is 1 to `maxLength` characters of `A-Z a-z 0-9 . _ : -` (nothing a log line,
    /// a header or a JSON string would need to escape), else the next ID of the sequence.
    mutating func id(given: String?) -> String {
        if let given, Self.isUsable(given) { return given }
        return next()
    }

    /// The next of the sequence (SplitMix64: a counter through a bijective mix, so the IDs a loop
    /// makes do not repeat).
    package mutating func next() -> String {
        var value = generator.next()
        return String(unsafeUninitializedCapacity: 16) { digits in
            for index in (0..<16).reversed() {
                digits[index] = Self.hexDigit(UInt8(truncatingIfNeeded: value) & 0xF)
                value >>= 4
            }
            return 16
        }
    }

    private static func hexDigit(_ value: UInt8) -> UInt8 {
        value < 10 ? UInt8(ascii: "0") + value : UInt8(ascii: "a") + value - 10
    }

    static func isUsable(_ id: String) -> Bool {
        (1...maxLength).contains(id.utf8.count)
            && id.utf8.allSatisfy { byte in
                switch byte {
                case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                    UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: ":"),
                    UInt8(ascii: "-"):
                    true
                default: false
                }
            }
    }
}
