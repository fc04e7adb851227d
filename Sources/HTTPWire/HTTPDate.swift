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
        let days = unixSeconds >= 0 ? unixSeconds / 86_400 : (unixSeconds - 86_399) / 86_400
        let secondOfDay = unixSeconds - days * 86_400
        // Howard Hinnant's days-from-civil inverse.
        let shifted = days + 719_468
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1_460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        let weekday = ((days % 7) + 11) % 7  // 1970-01-01 was a Thursday
        func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(weekdays[weekday]), \(two(day)) \(months[month - 1]) \(year) "
            + "\(two(secondOfDay / 3_600)):\(two(secondOfDay / 60 % 60)):\(two(secondOfDay % 60)) GMT"
    }

    private static let weekdays = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
}
