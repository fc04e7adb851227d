import HTTPGrammar

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
        let date = CivilDate(unixSeconds: unixSeconds)
        func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let yearText = String(date.year)
        return String(repeating: "0", count: max(0, 4 - yearText.count)) + yearText
            + "-\(two(date.month))-\(two(date.day))T\(two(date.hour)):\(two(date.minute)):\(two(date.second))."
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
