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

    /// The whole seconds since 1970 of an RFC 3339 date-time (`2023-02-07T04:46:06.917Z`, the Met's
    /// `metadataDate`; a fraction of any length, `Z` or an offset such as `+01:00`), or nil for
    /// anything else, read strictly (`T` and `Z` in either case, as RFC 3339 allows).
    public static func seconds(rfc3339 text: String) -> Int? {
        let bytes = Array(text.utf8)
        func number(_ start: Int, _ count: Int) -> Int? {
            guard start + count <= bytes.count else { return nil }
            var value = 0
            for byte in bytes[start..<(start + count)] {
                guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
                value = value * 10 + Int(byte - UInt8(ascii: "0"))
            }
            return value
        }
        func byte(_ index: Int, _ expected: Character...) -> Bool {
            index < bytes.count && expected.contains { $0.asciiValue == bytes[index] }
        }
        guard byte(4, "-"), byte(7, "-"), byte(10, "T", "t"), byte(13, ":"), byte(16, ":"),
            let year = number(0, 4), let month = number(5, 2), let day = number(8, 2), let hour = number(11, 2),
            let minute = number(14, 2), let second = number(17, 2),
            let local = CivilDate.unixSeconds(
                year: year, month: month, day: day, hour: hour, minute: minute, second: second)
        else { return nil }
        var index = 19
        if byte(index, ".") {
            index += 1
            let digits = bytes[index...].prefix { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }.count
            guard digits > 0 else { return nil }
            index += digits
        }
        if byte(index, "Z", "z"), index + 1 == bytes.count { return local }
        guard byte(index, "+", "-"), index + 6 == bytes.count, byte(index + 3, ":"),
            let hours = number(index + 1, 2), let minutes = number(index + 4, 2), hours < 24, minutes < 60
        else { return nil }
        let offset = (hours * 60 + minutes) * 60
        return byte(index, "+") ? local - offset : local + offset
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
