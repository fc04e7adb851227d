/// How log lines are written (`--log-format`).
public enum LogFormat: String, Sendable, CaseIterable {
    /// `2026-12-02T03:52:31.123Z info: message`: for people and `grep`.
    case text
    /// One JSON object a line, `{"time":…,"level":…,"message":…}` (access lines with their own
    /// members): for log shippers and `jq`.
    case json
    /// `info: message`, without a time: the command line's own notes on a terminal, and tests.
    case bare
}

/// RFC 3339 timestamps in UTC with milliseconds (`2026-12-02T03:52:31.123Z`).
public enum Timestamp {
    /// `unixSeconds` as RFC 3339 UTC, to the nearest millisecond. The proleptic Gregorian calendar.
    public static func rfc3339(_ unixSeconds: Double) -> String {
        var milliseconds = Int((unixSeconds * 1_000).rounded())
        if milliseconds < 0 { milliseconds = 0 }
        return secondPrefix(milliseconds / 1_000) + millisecondSuffix(milliseconds % 1_000)
    }

    /// `2026-12-02T03:52:31.`: what every timestamp within the second starts with, for a caller
    /// that keeps it for the second (see `AccessLine`).
    public static func secondPrefix(_ unixSeconds: Int) -> String {
        let days = unixSeconds / 86_400
        let secondOfDay = unixSeconds % 86_400
        // Howard Hinnant's civil-from-days.
        let shifted = days + 719_468
        let era = shifted / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1_460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let yearText = String(year)
        return String(repeating: "0", count: max(0, 4 - yearText.count)) + yearText
            + "-\(two(month))-\(two(day))T\(two(secondOfDay / 3_600)):\(two(secondOfDay / 60 % 60)):"
            + "\(two(secondOfDay % 60))."
    }

    /// `123Z` for 123 ms.
    public static func millisecondSuffix(_ milliseconds: Int) -> String {
        let text = String(milliseconds)
        return String(repeating: "0", count: max(0, 3 - text.count)) + text + "Z"
    }
}

/// Where the access log goes (`--access-log`).
public enum AccessLogDestination: Sendable, Equatable {
    /// Standard error, with the other log lines (`-`, the default).
    case standardError
    /// Appended to this file, created if missing (`PATH`).
    case file(String)
    /// Not written (`off`).
    case off
}
