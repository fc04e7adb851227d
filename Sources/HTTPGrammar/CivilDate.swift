/// A moment in UTC as calendar fields (the proleptic Gregorian calendar), for the two places that
/// write dates: the `Date` field (`HTTPWire.HTTPDate`, IMF-fixdate) and the logs' RFC 3339 times
/// (`MetEngine.Timestamp`). One conversion, Howard Hinnant's civil-from-days, so the two never
/// disagree about a day.
public struct CivilDate: Sendable, Equatable {
    public let year: Int
    /// 1–12.
    public let month: Int
    /// 1–31.
    public let day: Int
    /// 0 (Sunday) – 6 (Saturday).
    public let weekday: Int
    public let hour: Int
    public let minute: Int
    public let second: Int

    /// The calendar fields of `unixSeconds` (seconds since 1970-01-01T00:00:00Z; negative before).
    public init(unixSeconds: Int) {
        let days = unixSeconds >= 0 ? unixSeconds / 86_400 : (unixSeconds - 86_399) / 86_400
        let secondOfDay = unixSeconds - days * 86_400
        let shifted = days + 719_468
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1_460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        weekday = ((days % 7) + 11) % 7  // 1970-01-01 was a Thursday
        hour = secondOfDay / 3_600
        minute = secondOfDay / 60 % 60
        second = secondOfDay % 60
    }

    /// The seconds since 1970 of a moment in UTC given by its fields, or nil when they name none
    /// (a month past 12, the 30th of February, an hour past 23, a 60th second, a year outside
    /// 1–9999). Hinnant's days-from-civil, the inverse of `init(unixSeconds:)`.
    public static func unixSeconds(year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int) -> Int? {
        guard (1...9999).contains(year), (1...12).contains(month), (0...23).contains(hour),
            (0...59).contains(minute), (0...59).contains(second)
        else { return nil }
        let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
        let lengths = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
        guard (1...lengths[month - 1]).contains(day) else { return nil }
        let shiftedYear = month <= 2 ? year - 1 : year
        let era = shiftedYear / 400
        let yearOfEra = shiftedYear - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        let days = era * 146_097 + dayOfEra - 719_468
        return days * 86_400 + hour * 3_600 + minute * 60 + second
    }
}
