import MetEngine

/// One configurable setting: its flag, its environment variable, its default as shown to people,
/// and how a text value is applied. The table of these drives parsing, `--help` and the README.
public struct ConfigurationOption: Sendable {
    /// The flag, such as `--port`.
    public let flag: String
    /// The placeholder shown after the flag in help (`PORT`).
    public let placeholder: String
    /// The default, as a person would write it.
    public let defaultText: String
    /// One line on what it does.
    public let help: String
    /// Parses `value` into the configuration, or explains why it cannot.
    let apply: @Sendable (inout ServerConfiguration, String) -> String?

    /// The environment variable: `THEMET_` + the flag in upper snake case (`THEMET_DATA_DIR`).
    public var environmentVariable: String {
        "THEMET_" + flag.dropFirst(2).uppercased().replacingOccurrences(of: "-", with: "_")
    }
}

extension String {
    fileprivate func replacingOccurrences(of target: Character, with replacement: Character) -> String {
        String(map { $0 == target ? replacement : $0 })
    }
}
