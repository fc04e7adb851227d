import MetEngine

/// Where the value of an option in effect came from.
public enum SettingSource: Sendable, Equatable {
    /// A line of a configuration file.
    case file(path: String, line: Int)
    /// A `THEMET_*` variable, by name.
    case environment(String)
    /// A command-line flag.
    case flag
}

extension SettingSource {
    /// Its precedence: a flag over a variable over the file.
    var rank: Int {
        switch self {
        case .file: 0
        case .environment: 1
        case .flag: 2
        }
    }
}

/// An option's value as it was given, and where.
public struct SettingOrigin: Sendable, Equatable {
    public let value: String
    public let source: SettingSource
}

extension ServerConfiguration {
    /// Builds a configuration from command-line arguments over `THEMET_*` environment variables
    /// over the configuration file `file` over defaults. Pure: reads nothing but its arguments.
    ///
    /// Flags are `--flag value` or `--flag=value`; `--` ends them (nothing may follow it here). An
    /// unknown flag, a missing value or a bad value throws a `ConfigurationError` naming the
    /// flag. A bad environment value throws too, naming its variable, unless the flag is given;
    /// a bad value in the file, naming its line, unless the variable or the flag is given: the
    /// source that wins can stand in for one that cannot be changed.
    public static func parse(
        arguments: [String], environment: [String: String], processorCount: Int, file: ConfigurationFile? = nil
    ) throws(ConfigurationError) -> ServerConfiguration {
        try resolve(arguments: arguments, environment: environment, processorCount: processorCount, file: file)
            .configuration
    }

    /// `parse`, with where each option that is not at its default came from, by flag (what
    /// `themet config` prints).
    public static func resolve(
        arguments: [String], environment: [String: String], processorCount: Int, file: ConfigurationFile? = nil
    ) throws(ConfigurationError) -> (configuration: ServerConfiguration, origins: [String: SettingOrigin]) {
        var configuration = ServerConfiguration(environment: environment, processorCount: processorCount)
        var origins: [String: SettingOrigin] = [:]
        var fileErrors: [(flag: String, error: ConfigurationError)] = []
        for setting in file?.settings ?? [] {
            let path = file?.path ?? ""
            guard let option = options.first(where: { $0.flag == setting.option }) else { continue }
            if let reason = option.apply(&configuration, setting.value) {
                let name = String(option.flag.dropFirst(2))
                let error = ConfigurationError(flag: name, reason: reason, location: "\(path):\(setting.line)")
                fileErrors.append((option.flag, error))
            } else {
                origins[option.flag] = SettingOrigin(
                    value: setting.value, source: .file(path: path, line: setting.line))
            }
        }
        var environmentErrors: [ConfigurationError] = []
        var variables = Set<String>()
        for option in options {
            if let value = environment[option.environmentVariable] {
                variables.insert(option.flag)
                if let reason = option.apply(&configuration, value) {
                    environmentErrors.append(
                        ConfigurationError(flag: option.flag, reason: "\(reason) (from \(option.environmentVariable))"))
                } else {
                    origins[option.flag] = SettingOrigin(value: value, source: .environment(option.environmentVariable))
                }
            }
        }
        var given = Set<String>()
        var remaining = arguments[...]
        while let argument = remaining.popFirst() {
            if argument == "--" {
                if let extra = remaining.first {
                    throw ConfigurationError(flag: extra, reason: "unexpected argument; the server takes flags only")
                }
                break
            }
            guard argument.hasPrefix("--") else {
                throw ConfigurationError(flag: argument, reason: "unexpected argument; flags start with --")
            }
            let name: String
            let inlineValue: String?
            if let equals = argument.firstIndex(of: "=") {
                name = String(argument[..<equals])
                inlineValue = String(argument[argument.index(after: equals)...])
            } else {
                name = argument
                inlineValue = nil
            }
            if name == ConfigurationFile.flag {
                // Read before: `file` is the configuration it names (`ConfigurationFile.load`).
                guard inlineValue != nil || remaining.popFirst() != nil else {
                    throw ConfigurationError(flag: name, reason: "needs a value (FILE)")
                }
                continue
            }
            guard let option = options.first(where: { $0.flag == name }) else {
                throw ConfigurationError(flag: name, reason: "unknown flag; see --help")
            }
            guard let value = inlineValue ?? remaining.popFirst() else {
                throw ConfigurationError(flag: name, reason: "needs a value (\(option.placeholder))")
            }
            if let reason = option.apply(&configuration, value) {
                throw ConfigurationError(flag: name, reason: reason)
            }
            origins[name] = SettingOrigin(value: value, source: .flag)
            given.insert(name)
        }
        if let error = environmentErrors.first(where: { !given.contains($0.flag) }) { throw error }
        if let failure = fileErrors.first(where: { !given.contains($0.flag) && !variables.contains($0.flag) }) {
            throw failure.error
        }
        // --redis-secret and --redis-secret-file name one secret: given at two levels, the higher
        // one's wins, as for one option; given at one level, `groupSecret` says they conflict.
        if let secret = origins["--redis-secret"], let file = origins["--redis-secret-file"],
            secret.source.rank != file.source.rank
        {
            if secret.source.rank > file.source.rank {
                configuration.redis.secretFile = nil
                origins["--redis-secret-file"] = nil
            } else {
                configuration.redis.secret = nil
                origins["--redis-secret"] = nil
            }
        }
        return (configuration, origins)
    }

    /// Why `value` cannot be a secret (`--admin-token`, `--redis-secret`), or nil when it can: 16 to
    /// 256 visible ASCII characters (a shorter one can be guessed; spaces and controls are lost in
    /// configuration). The reason never repeats the value.
    public static func secretProblem(_ value: String) -> String? {
        guard (16...256).contains(value.utf8.count), value.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
            return "expected 16 to 256 visible ASCII characters (no spaces), got \(value.utf8.count) character(s)"
        }
        return nil
    }

    /// `30`, `1.5`, `30s`, `250ms`, `5m`, `2h`, `7d` → seconds; nil if malformed or negative.
    static func parseDuration(_ text: String) -> Double? {
        let units: [(String, Double)] = [("ms", 0.001), ("s", 1), ("m", 60), ("h", 3_600), ("d", 86_400)]
        for (suffix, scale) in units where text.hasSuffix(suffix) {
            guard let number = Double(text.dropLast(suffix.count)), number.isFinite, number >= 0 else { return nil }
            return number * scale
        }
        guard let number = Double(text), number.isFinite, number >= 0 else { return nil }
        return number
    }

    /// `4096`, `64K`, `64KiB`, `64KB`, `256M`, `1G` → bytes (binary multiples); nil if malformed.
    static func parseByteSize(_ text: String) -> Int? {
        let upper = text.uppercased()
        let units: [(String, Int)] = [
            ("KIB", 1 << 10), ("MIB", 1 << 20), ("GIB", 1 << 30), ("KB", 1 << 10), ("MB", 1 << 20), ("GB", 1 << 30),
            ("K", 1 << 10), ("M", 1 << 20), ("G", 1 << 30), ("B", 1),
        ]
        for (suffix, scale) in units where upper.hasSuffix(suffix) {
            guard let number = Int(upper.dropLast(suffix.count)), number >= 0 else { return nil }
            let (bytes, overflow) = number.multipliedReportingOverflow(by: scale)
            return overflow ? nil : bytes
        }
        guard let number = Int(upper), number >= 0 else { return nil }
        return number
    }

    /// Whether `value` starts with `http://` or `https://`, in any case: a URL, not a path.
    public static func isHTTPURL(_ value: String) -> Bool {
        let lower = value.lowercased()
        return lower.hasPrefix("http://") || lower.hasPrefix("https://")
    }

    /// An `http(s)://host[:port]` origin (a trailing `/` or `/public/collection/v1[.1]` is dropped),
    /// or anything else as a directory path.
    static func parseUpstream(_ value: String) -> UpstreamLocation? {
        guard !value.isEmpty else { return nil }
        guard isHTTPURL(value) else { return .directory(value) }
        var origin = value
        for suffix in ["/", "/public/collection/v1.1", "/public/collection/v1"] where origin.hasSuffix(suffix) {
            origin.removeLast(suffix.count)
        }
        while origin.hasSuffix("/") { origin.removeLast() }
        let afterScheme = origin.split(separator: "/", omittingEmptySubsequences: false)
        // ["http:", "", "host[:port]"] exactly: no path, query or credentials.
        guard afterScheme.count == 3, let authority = afterScheme.last, !authority.isEmpty,
            !authority.contains("@"), !authority.contains("?"), !authority.contains("#")
        else { return nil }
        return .origin(origin)
    }
}
