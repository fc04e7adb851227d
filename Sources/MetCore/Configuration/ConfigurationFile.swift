import MetEngine

/// A configuration file (`--config FILE`): the server's flags as `name = value` lines, below the
/// environment and the flags in precedence (`ServerConfiguration.resolve`).
///
/// Read strictly, a line at a time (LF or CRLF):
/// - a blank line, or one whose first character past spaces and tabs is `#`, is a comment;
/// - otherwise it is `name = value`: `name` a flag's name without its dashes (`data-dir`), each
///   at most once in a file, never `config`;
/// - `value` is what the flag takes, its spaces and tabs around trimmed. In single or double
///   quotes it is taken as written between them (no escapes: it cannot hold its own quote), and
///   only a comment may follow; unquoted, it ends at a `#` after a space or tab (a comment), so
///   that `https://x/#/objects/{id}` keeps its `#`.
///
/// The text must be UTF-8 without control characters but tabs, at most `maxBytes`. A line that
/// breaks a rule, an unknown name or a repeated one is a `ConfigurationError` located at the
/// file's line; a bad value is found when it is applied, by the option's own check.
public struct ConfigurationFile: Sendable, Equatable {
    /// One `name = value` line.
    public struct Setting: Sendable, Equatable {
        /// The option it sets.
        public let option: String
        public let value: String
        /// Its line in the file, from 1.
        public let line: Int
    }

    /// The largest file read (a configuration is a few kilobytes; anything near this is not one).
    public static let maxBytes = 1 << 20

    /// The file's path, as named (for errors and `themet config`).
    public let path: String
    /// The settings, in the file's order.
    public let settings: [Setting]

    /// Reads `bytes` as the file at `path`.
    public init(path: String, bytes: [UInt8]) throws(ConfigurationError) {
        self.path = path
        guard bytes.count <= Self.maxBytes else {
            throw ConfigurationError(flag: "--config", reason: "\(path) is larger than \(Self.maxBytes) bytes")
        }
        // A byte order mark (some editors save one) is no part of the first line.
        let unmarked = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? Array(bytes.dropFirst(3)) : bytes
        guard let text = String(validating: unmarked, as: UTF8.self) else {
            throw ConfigurationError(flag: "--config", reason: "\(path) is not UTF-8 text")
        }
        var settings: [Setting] = []
        var seen: [String: Int] = [:]
        // Unicode scalars, never Characters: a combining or prepended mark makes one Character of
        // itself and a quote, `=` or `#` beside it, which would hide that byte from the rules.
        let lines = text.unicodeScalars.split(separator: "\n", omittingEmptySubsequences: false)
        for (index, raw) in lines.enumerated() {
            let number = index + 1
            func failure(_ name: String, _ reason: String) -> ConfigurationError {
                ConfigurationError(flag: name, reason: reason, location: "\(path):\(number)")
            }
            var line = Array(raw)
            if line.last == "\r" { line.removeLast() }
            if line.contains(where: { $0.properties.generalCategory == .control && $0 != "\t" }) {
                throw failure("", "a control character; a line is name = value")
            }
            let content = Self.trimmed(line[...])
            if content.isEmpty || content.first == "#" { continue }
            guard let equals = content.firstIndex(of: "=") else {
                throw failure("", "expected name = value, got '\(Self.string(content.prefix(60)))'")
            }
            let name = Self.string(Self.trimmed(content[..<equals]))
            guard !name.isEmpty else { throw failure("", "a value without a name") }
            if name.hasPrefix("-") {
                throw failure(name, "names are written without their dashes (\(name.drop { $0 == "-" }) = …)")
            }
            guard name != "config" else { throw failure(name, "a configuration file cannot name another") }
            guard ServerConfiguration.options.contains(where: { $0.flag == "--" + name }) else {
                throw failure(name, "no such setting; themet --help lists them by their flags")
            }
            if let first = seen[name] { throw failure(name, "set twice (first on line \(first))") }
            seen[name] = number
            let value = try Self.value(content[(equals + 1)...]) { reason in failure(name, reason) }
            settings.append(Setting(option: "--" + name, value: value, line: number))
        }
        self.settings = settings
    }

    /// A value as written after `=` (not yet trimmed, so that a `#` after the spaces that follow
    /// `=` is seen as a comment): unquoted up to a comment, or between quotes.
    private static func value(
        _ written: ArraySlice<Unicode.Scalar>, failure: (String) -> ConfigurationError
    ) throws(ConfigurationError) -> String {
        let text = trimmed(written)
        guard let quote = text.first, quote == "\"" || quote == "'" else {
            var end = written.endIndex
            var previous: Unicode.Scalar = "="
            for index in written.indices {
                if written[index] == "#", previous == " " || previous == "\t" {
                    end = index
                    break
                }
                previous = written[index]
            }
            return string(trimmed(written[..<end]))
        }
        let inside = text.dropFirst()
        guard let close = inside.firstIndex(of: quote) else { throw failure("no closing \(quote)") }
        let rest = trimmed(inside[(close + 1)...])
        guard rest.isEmpty || rest.first == "#" else {
            throw failure("only a comment may follow a quoted value, got '\(string(rest.prefix(40)))'")
        }
        return string(inside[..<close])
    }

    /// `scalars` without the spaces and tabs at either end.
    private static func trimmed(_ scalars: ArraySlice<Unicode.Scalar>) -> ArraySlice<Unicode.Scalar> {
        let isBlank: (Unicode.Scalar) -> Bool = { $0 == " " || $0 == "\t" }
        guard let first = scalars.firstIndex(where: { !isBlank($0) }) else { return scalars[scalars.endIndex...] }
        let last = scalars.lastIndex(where: { !isBlank($0) })!
        return scalars[first...last]
    }

    private static func string(_ scalars: ArraySlice<Unicode.Scalar>) -> String {
        var text = ""
        text.unicodeScalars.append(contentsOf: scalars)
        return text
    }
}
