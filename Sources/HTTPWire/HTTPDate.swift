import HTTPGrammar

/// The `Date` field line (RFC 9110 IMF-fixdate), remade only when the second changes. One per
/// event loop; not thread-safe.
public struct HTTPDate {
    private var second = Int.min
    private var line: [UInt8] = []

    public init() {}

    /// `Date: Sun, 29 Nov 2026 19:07:48 GMT\r\n` for `unixSeconds`.
    public mutating func line(at unixSeconds: Int) -> [UInt8] {
        if unixSeconds != second {
            second = unixSeconds
            line = Self.fieldLine(unixSeconds)
        }
        return line
    }

    /// `Date: …` CRLF for `unixSeconds`, made afresh (the instance method reuses it within a second).
    /// A stored answer's `Date` is its fetch time, remade for nearly every disk hit.
    public static func fieldLine(_ unixSeconds: Int) -> [UInt8] {
        spelled(unixSeconds, prefix: "Date: ", suffix: "\r\n")
    }

    /// `Sun, 29 Nov 2026 19:07:48 GMT`: the proleptic Gregorian calendar, in UTC.
    public static func imfFixdate(_ unixSeconds: Int) -> String {
        String(decoding: spelled(unixSeconds, prefix: "", suffix: ""), as: UTF8.self)
    }

    /// `prefix`, `imfFixdate(unixSeconds)` and `suffix`, written byte by byte into an array made
    /// once: string interpolation, and then appending, which checks capacity at each byte, made
    /// the line 2 % of a disk hit. A year outside 0–9999 is written with as many digits as it has
    /// (and its sign).
    private static func spelled(_ unixSeconds: Int, prefix: StaticString, suffix: StaticString) -> [UInt8] {
        let date = CivilDate(unixSeconds: unixSeconds)
        // 29 bytes with a four-digit year; a year of Int's range takes at most 16 more.
        let capacity = prefix.utf8CodeUnitCount + 48 + suffix.utf8CodeUnitCount
        return [UInt8](unsafeUninitializedCapacity: capacity) { buffer, count in
            func put(_ byte: UInt8) {
                buffer[count] = byte
                count += 1
            }
            func put(_ text: StaticString, from start: Int = 0, count length: Int? = nil) {
                let length = length ?? text.utf8CodeUnitCount
                for index in start..<(start + length) { put(text.utf8Start[index]) }
            }
            func two(_ value: Int) {
                put(UInt8(ascii: "0") + UInt8(value / 10))
                put(UInt8(ascii: "0") + UInt8(value % 10))
            }
            put(prefix)
            put(weekdays, from: 3 * date.weekday, count: 3)
            put(", ")
            two(date.day)
            put(UInt8(ascii: " "))
            put(months, from: 3 * (date.month - 1), count: 3)
            put(UInt8(ascii: " "))
            if (0...9999).contains(date.year) {
                two(date.year / 100)
                two(date.year % 100)
            } else {
                for byte in String(date.year).utf8 { put(byte) }
            }
            put(UInt8(ascii: " "))
            two(date.hour)
            put(UInt8(ascii: ":"))
            two(date.minute)
            put(UInt8(ascii: ":"))
            two(date.second)
            put(" GMT")
            put(suffix)
        }
    }

    private static let weekdays: StaticString = "SunMonTueWedThuFriSat"
    private static let months: StaticString = "JanFebMarAprMayJunJulAugSepOctNovDec"
}
