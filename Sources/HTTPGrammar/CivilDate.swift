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
}
