import MetEngine

/// A bad configuration value. The message is one line naming the flag, ready to print; the
/// executable exits with status 64 (EX_USAGE).
public struct ConfigurationError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The flag at fault (`--port`), also when the value came from its environment variable; in a
    /// configuration file, the setting's name (`port`), or empty for a line that names none.
    public var flag: String
    /// What is wrong with it.
    public var reason: String
    /// Where in a configuration file (`/etc/themet/themet.conf:12`); nil for a flag or variable.
    public var location: String?

    public init(flag: String, reason: String, location: String? = nil) {
        self.flag = flag
        self.reason = reason
        self.location = location
    }

    public var description: String {
        ([location, flag.isEmpty ? nil : flag].compactMap { $0 } + [reason]).joined(separator: ": ")
    }
}
