import MetEngine

/// A real day of the proleptic Gregorian calendar written `YYYY-MM-DD`, the form of the Met's
/// `metadataDate` and the date part of an ISO 8601 timestamp.
///
/// Parsing is strict and byte-wise: exactly four, two and two ASCII digits joined by `-`, a month
/// from 01 to 12, and a day that month has in that year (February 29 only in leap years). Nothing
/// is rolled over or guessed; years 0000 to 9999 are all accepted, so a caller that needs a
/// narrower range checks `year` itself.
public struct CalendarDate: Sendable, Equatable {
    /// The year, 0…9999.
    public let year: Int
    /// The month, 1…12.
    public let month: Int
    /// The day of the month, 1…31 (at most the month's length).
    public let day: Int

    /// The date `text` names, or nil when it is anything but a real `YYYY-MM-DD` day.
    public init?(parsing text: some StringProtocol) {
        let bytes = text.utf8
        guard bytes.count == 10 else { return nil }
        var digits: [Int] = []
        digits.reserveCapacity(8)
        for (offset, byte) in bytes.enumerated() {
            if offset == 4 || offset == 7 {
                guard byte == UInt8(ascii: "-") else { return nil }
            } else {
                guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
                digits.append(Int(byte - UInt8(ascii: "0")))
            }
        }
        let year = digits[0] * 1_000 + digits[1] * 100 + digits[2] * 10 + digits[3]
        let month = digits[4] * 10 + digits[5]
        let day = digits[6] * 10 + digits[7]
        guard (1...12).contains(month), (1...Self.length(ofMonth: month, in: year)).contains(day) else { return nil }
        self.year = year
        self.month = month
        self.day = day
    }

    /// The number of days in `month` (1…12) of `year`.
    private static func length(ofMonth month: Int, in year: Int) -> Int {
        let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
        return [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1]
    }
}
