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
    public static func fieldLine(_ unixSeconds: Int) -> [UInt8] {
        Array("Date: \(imfFixdate(unixSeconds))\r\n".utf8)
    }

    /// `Sun, 29 Nov 2026 19:07:48 GMT`: the proleptic Gregorian calendar, in UTC.
    public static func imfFixdate(_ unixSeconds: Int) -> String {
        let date = CivilDate(unixSeconds: unixSeconds)
        func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(weekdays[date.weekday]), \(two(date.day)) \(months[date.month - 1]) \(date.year) "
            + "\(two(date.hour)):\(two(date.minute)):\(two(date.second)) GMT"
    }

    private static let weekdays = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
}
