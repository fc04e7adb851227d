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
    /// Spelled byte by byte: a stored answer's `Date` is its fetch time, remade for nearly every
    /// disk hit, and string interpolation made it 2 % of one.
    public static func fieldLine(_ unixSeconds: Int) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(37)
        bytes.append(contentsOf: "Date: ".utf8)
        appendIMFFixdate(unixSeconds, to: &bytes)
        bytes.append(13)
        bytes.append(10)
        return bytes
    }

    /// `Sun, 29 Nov 2026 19:07:48 GMT`: the proleptic Gregorian calendar, in UTC.
    public static func imfFixdate(_ unixSeconds: Int) -> String {
        var bytes: [UInt8] = []
        appendIMFFixdate(unixSeconds, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Appends `imfFixdate(unixSeconds)`'s bytes. A year outside 0–9999 is written with as many
    /// digits as it has (and its sign).
    private static func appendIMFFixdate(_ unixSeconds: Int, to bytes: inout [UInt8]) {
        let date = CivilDate(unixSeconds: unixSeconds)
        func two(_ value: Int) {
            bytes.append(UInt8(ascii: "0") + UInt8(value / 10))
            bytes.append(UInt8(ascii: "0") + UInt8(value % 10))
        }
        bytes.append(contentsOf: weekdays[date.weekday])
        bytes.append(UInt8(ascii: ","))
        bytes.append(UInt8(ascii: " "))
        two(date.day)
        bytes.append(UInt8(ascii: " "))
        bytes.append(contentsOf: months[date.month - 1])
        bytes.append(UInt8(ascii: " "))
        if (0...9999).contains(date.year) {
            two(date.year / 100)
            two(date.year % 100)
        } else {
            bytes.append(contentsOf: String(date.year).utf8)
        }
        bytes.append(UInt8(ascii: " "))
        two(date.hour)
        bytes.append(UInt8(ascii: ":"))
        two(date.minute)
        bytes.append(UInt8(ascii: ":"))
        two(date.second)
        bytes.append(contentsOf: " GMT".utf8)
    }

    private static let weekdays: [[UInt8]] = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"].map { Array($0.utf8) }
    private static let months: [[UInt8]] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ].map { Array($0.utf8) }
}
