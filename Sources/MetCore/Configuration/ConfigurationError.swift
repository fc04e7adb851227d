import MetEngine

/// A bad configuration value. The message is one line naming the flag, ready to print; the
/// executable exits with status 64 (EX_USAGE).
public struct ConfigurationError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The flag at fault (`--port`), also when the value came from its environment variable.
    public var flag: String
    /// What is wrong with it.
    public var reason: String

    public init(flag: String, reason: String) {
        self.flag = flag
        self.reason = reason
    }

    public var description: String { "\(flag): \(reason)" }
}
