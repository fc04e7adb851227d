import MetCore
import MetEngine

/// `themet config`: the configuration a server given the same flags, variables and file would
/// run with, written as a configuration file that says where each value came from.
enum ConfigCommand {
    static let usage = """
        usage: themet config [server flags]

        Prints the configuration that themet serve, given the same flags, THEMET_* variables and
        configuration file, would run with, as a configuration file: each setting given somewhere
        as name = value, with where it came from (a flag, a variable, or FILE:LINE), then each
        setting left at its default as a comment. The values of --admin-token and --redis-secret,
        and a password in --redis, are masked. Changes nothing: the data directory and an upstream
        directory are not looked at. Exit status: 0, 64 for a bad flag, variable, file or secret
        (said as themet serve says it).
        """

    /// Options whose values are never printed.
    static let secrets: Set<String> = ["--admin-token", "--redis-secret"]

    /// The text printed for `origins` (see `ServerConfiguration.resolve`), read from `file`.
    static func text(origins: [String: SettingOrigin], file: ConfigurationFile?) -> String {
        var lines = [
            "# themet \(MetService.version): the configuration in effect (flags over THEMET_* variables over "
                + (file.map { "\($0.path)" } ?? "no configuration file") + " over defaults)"
        ]
        var defaults: [String] = []
        for option in ServerConfiguration.options {
            let name = String(option.flag.dropFirst(2))
            guard let origin = origins[option.flag] else {
                defaults.append("# \(name): \(option.defaultText)")
                continue
            }
            let source =
                switch origin.source {
                case .flag: "flag \(option.flag)"
                case .environment(let variable): variable
                case .file(let path, let line): "\(path):\(line)"
                }
            lines.append("\(name) = \(quoted(masked(origin.value, of: option.flag)))  # \(source)")
        }
        return (lines + ["", "# defaults"] + defaults).joined(separator: "\n") + "\n"
    }

    /// `value` with a secret hidden: all of a secret option's, the password of a URL's userinfo.
    private static func masked(_ value: String, of flag: String) -> String {
        if secrets.contains(flag) { return "********" }
        // The userinfo ends at the last @ (as RedisAddress reads it: a password may hold one).
        guard let scheme = value.range(of: "://"), let at = value[scheme.upperBound...].lastIndex(of: "@") else {
            return value
        }
        let userinfo = value[scheme.upperBound..<at]
        guard let colon = userinfo.firstIndex(of: ":") else { return value }
        return String(value[..<userinfo.index(after: colon)]) + "********" + String(value[at...])
    }

    /// `value` as a configuration file writes it: quoted when its spaces at either end, a `#`, or
    /// nothing at all would be lost otherwise.
    private static func quoted(_ value: String) -> String {
        // By Unicode scalars, as the file is read (a mark beside a quote or # is its own Character).
        let scalars = value.unicodeScalars
        let needs =
            scalars.isEmpty || [" ", "\t", "\"", "'"].contains(scalars.first!) || [" ", "\t"].contains(scalars.last!)
            || scalars.contains("#")
        guard needs else { return value }
        return scalars.contains("\"") ? "'\(value)'" : "\"\(value)\""
    }
}
