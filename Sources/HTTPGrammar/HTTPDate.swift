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

    /// The seconds since 1970 an HTTP-date names (RFC 9110 §5.6.7), in any of its three formats,
    /// as a recipient must accept them: IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`), RFC 850
    /// (`Sunday, 06-Nov-94 08:49:37 GMT`, a two-digit year read as the one in the hundred years
    /// that end 50 years after `now`'s) and asctime (`Sun Nov  6 08:49:37 1994`). Nil for anything
    /// else, read strictly: its own case of names, its spaces, a real date (the weekday is not
    /// checked against it, as the RFC lets a recipient do).
    public static func seconds(_ text: String, now: Int) -> Int? {
        let bytes = Array(text.utf8)
        func number(_ range: Range<Int>) -> Int? {
            guard range.upperBound <= bytes.count, !range.isEmpty else { return nil }
            var value = 0
            for index in range {
                guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) else { return nil }
                value = value * 10 + Int(bytes[index] - UInt8(ascii: "0"))
            }
            return value
        }
        func month(at start: Int) -> Int? {
            guard start + 3 <= bytes.count else { return nil }
            let name = Array(bytes[start..<(start + 3)])
            let all = Array(UnsafeBufferPointer(start: months.utf8Start, count: months.utf8CodeUnitCount))
            return (0..<12).first { Array(all[(3 * $0)..<(3 * $0 + 3)]) == name }.map { $0 + 1 }
        }
        func matches(_ literal: String, at start: Int) -> Bool {
            let expected = Array(literal.utf8)
            return start + expected.count <= bytes.count && Array(bytes[start..<(start + expected.count)]) == expected
        }
        func clock(at start: Int) -> (Int, Int, Int)? {
            guard matches(":", at: start + 2), matches(":", at: start + 5), let hour = number(start..<(start + 2)),
                let minute = number((start + 3)..<(start + 5)), let second = number((start + 6)..<(start + 8))
            else { return nil }
            return (hour, minute, second)
        }
        let shortDays = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
        let longDays = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"]
        // IMF-fixdate: "Sun, 06 Nov 1994 08:49:37 GMT", 29 bytes.
        if bytes.count == 29, shortDays.contains(where: { matches($0 + ", ", at: 0) }), matches(" ", at: 7),
            matches(" ", at: 11), matches(" ", at: 16), matches(" GMT", at: 25), let day = number(5..<7),
            let month = month(at: 8), let year = number(12..<16), let (hour, minute, second) = clock(at: 17)
        {
            return CivilDate.unixSeconds(year: year, month: month, day: day, hour: hour, minute: minute, second: second)
        }
        // RFC 850: "Sunday, 06-Nov-94 08:49:37 GMT".
        if let weekday = longDays.first(where: { matches($0 + ", ", at: 0) }) {
            let start = weekday.utf8.count + 2
            guard bytes.count == start + 22, matches("-", at: start + 2), matches("-", at: start + 6),
                matches(" ", at: start + 9), matches(" GMT", at: start + 18), let day = number(start..<(start + 2)),
                let month = month(at: start + 3), let short = number((start + 7)..<(start + 9)),
                let (hour, minute, second) = clock(at: start + 10)
            else { return nil }
            // RFC 9110 §5.6.7: a year that appears more than 50 years in the future is in the past.
            let thisYear = CivilDate(unixSeconds: now).year
            var year = thisYear - thisYear % 100 + short
            if year > thisYear + 50 { year -= 100 }
            if year <= thisYear - 50 { year += 100 }
            return CivilDate.unixSeconds(year: year, month: month, day: day, hour: hour, minute: minute, second: second)
        }
        // asctime: "Sun Nov  6 08:49:37 1994" (a one-digit day after a space).
        if bytes.count == 24, shortDays.contains(where: { matches($0 + " ", at: 0) }), let month = month(at: 4),
            matches(" ", at: 7), matches(" ", at: 10), matches(" ", at: 19),
            let day = bytes[8] == UInt8(ascii: " ") ? number(9..<10) : number(8..<10),
            let (hour, minute, second) = clock(at: 11), let year = number(20..<24)
        {
            return CivilDate.unixSeconds(year: year, month: month, day: day, hour: hour, minute: minute, second: second)
        }
        return nil
    }

    private static let weekdays: StaticString = "SunMonTueWedThuFriSat"
    private static let months: StaticString = "JanFebMarAprMayJunJulAugSepOctNovDec"
}
