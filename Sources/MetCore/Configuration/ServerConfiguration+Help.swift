import MetEngine

extension ServerConfiguration {
    /// The text `themet --help` prints: commands, then every option with its environment variable
    /// and default, from the same table the parser uses.
    public static var usage: String {
        var lines =
            [
                "usage: themet [serve] [--flag VALUE]...",
                "",
                "A caching gateway in front of the Metropolitan Museum of Art Collection API.",
                "Flags win over THEMET_* environment variables, which win over a configuration file,",
                "which wins over defaults.",
                "",
                "options:",
            ] + ConfigurationFile.usageLines
        for option in options {
            let flag = "  \(option.flag) \(option.placeholder)"
            lines.append(flag.padding(toLength: 30, withPad: " ", startingAt: 0) + option.help)
            lines.append(
                String(repeating: " ", count: 30) + "[\(option.environmentVariable); default \(option.defaultText)]")
        }
        lines.append("  --help                      Print this text.")
        lines.append("  --version                   Print the version.")
        return lines.joined(separator: "\n")
    }
}
