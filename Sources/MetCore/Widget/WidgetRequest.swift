import Foundation
import MetEngine

/// A validated `/widget/timeline` request.
package struct WidgetRequest: Sendable {
    /// The widget size.
    var family: WidgetFamily
    /// The first entry's date, seconds since 1970; nil for "now, rounded down to a whole interval".
    var start: Double?
    /// Seconds between entries, 60…86400. Default 3600 (one hour, as the app's widget).
    var interval: Double
    /// A hydrated search to build the timeline from, or nil for the shared store.
    var search: SearchQuery?

    static let defaultInterval: Double = 3_600
    static let intervals: ClosedRange<Int> = 60...86_400
    /// The parameters of the timeline itself; with `q`, the others are `/search`'s. (`themet
    /// timeline` splits its arguments by them.)
    package static let parameters: Set<String> = ["family", "start", "interval"]

    init(_ target: RequestTarget) throws(Problem) {
        try target.rejectRepeats(of: Self.parameters)
        family = .medium
        if let text = target.value(of: "family") {
            guard let family = WidgetFamily(rawValue: text) else {
                throw Problem(.invalidParameter, "family must be medium or large.", parameter: "family")
            }
            self.family = family
        }
        if let text = target.value(of: "start") {
            guard let date = Self.parseDate(text) else {
                throw Problem(
                    .invalidParameter, "start must be an ISO 8601 date and time, such as 2026-11-29T18:00:00Z.",
                    parameter: "start")
            }
            start = date
        }
        interval = Self.defaultInterval
        if let text = target.value(of: "interval") {
            guard text.count <= 6, text.allSatisfy(\.isASCIIDigit), let seconds = Int(text),
                Self.intervals.contains(seconds)
            else {
                throw Problem(
                    .invalidParameter,
                    "interval must be seconds from \(Self.intervals.lowerBound) to \(Self.intervals.upperBound).",
                    parameter: "interval")
            }
            interval = Double(seconds)
        }
        var rest = target
        rest.query.removeAll { Self.parameters.contains($0.name) }
        if rest.value(of: "q") != nil {
            search = try SearchQuery(rest)
        } else {
            try target.allowOnly(
                Self.parameters,
                known: "The timeline takes family, start and interval, and with q the parameters of /search.")
        }
    }

    /// ISO 8601 with a time and a zone (`Z` or an offset), with or without fractional seconds:
    /// `YYYY-MM-DDTHH:MM:SS[.fff](Z|±HH:MM)`, a real calendar date, years 0001 to 9998 (so every
    /// date of a timeline keeps four digits). Nothing is rolled over or guessed.
    static func parseDate(_ text: String) -> Double? {
        guard text.utf8.count <= 40, isStrictTimestamp(text) else { return nil }
        for options: ISO8601DateFormatter.Options in [
            [.withInternetDateTime], [.withInternetDateTime, .withFractionalSeconds],
        ] {
            let formatter = ISO8601DateFormatter()
            formatter.formatOptions = options
            if let date = formatter.date(from: text) { return date.timeIntervalSince1970 }
        }
        return nil
    }

    /// Whether `text` has exactly the shape `parseDate` documents, with fields in range.
    private static func isStrictTimestamp(_ text: String) -> Bool {
        let characters = Array(text)
        guard characters.count >= 20, characters[10] == "T" || characters[10] == "t",
            let date = CalendarDate(parsing: String(characters[0..<10])), (1...9_998).contains(date.year)
        else { return false }
        func number(_ range: Range<Int>, max: Int) -> Bool {
            range.upperBound <= characters.count && characters[range].allSatisfy(\.isASCIIDigit)
                && Int(String(characters[range])).map { $0 <= max } == true
        }
        guard number(11..<13, max: 23), characters[13] == ":", number(14..<16, max: 59), characters[16] == ":",
            number(17..<19, max: 59)
        else { return false }
        var index = 19
        if characters[index] == "." {
            let digits = characters[(index + 1)...].prefix { $0.isASCIIDigit }.count
            guard (1...9).contains(digits) else { return false }
            index += 1 + digits
        }
        let zone = characters[index...]
        if zone.count == 1 { return zone.first == "Z" || zone.first == "z" }
        guard zone.count == 6, zone.first == "+" || zone.first == "-", characters[index + 3] == ":" else {
            return false
        }
        return number((index + 1)..<(index + 3), max: 23) && number((index + 4)..<(index + 6), max: 59)
    }
}
