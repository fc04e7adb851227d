import Foundation
import MetEngine

extension ConfigurationFile {
    /// The flag that names the file (`THEMET_CONFIG` in the environment): not an option of the
    /// configuration, but where options are found.
    public static let flag = "--config"

    /// `--help`'s lines on `--config`, in the options' layout.
    static let usageLines = [
        "  --config FILE".padding(toLength: 30, withPad: " ", startingAt: 0)
            + "Settings as name = value lines (the flags' names), below variables and flags; '' reads none.",
        String(repeating: " ", count: 30)
            + "[THEMET_CONFIG; default $XDG_CONFIG_HOME/themet/themet.conf (~/.config/…), then "
            + "/etc/themet/themet.conf, when present]",
    ]

    /// Where a configuration file is looked for when none is named, in order:
    /// `$XDG_CONFIG_HOME/themet/themet.conf` (`~/.config/themet/themet.conf` without it), then
    /// `/etc/themet/themet.conf`.
    public static func defaultPaths(environment: [String: String]) -> [String] {
        let home =
            environment["XDG_CONFIG_HOME"].flatMap { $0.isEmpty ? nil : $0 }
            ?? environment["HOME"].flatMap { $0.isEmpty ? nil : $0 + "/.config" }
        return (home.map { [$0 + "/themet/themet.conf"] } ?? []) + ["/etc/themet/themet.conf"]
    }

    /// The configuration file a server given `arguments` and `environment` reads: the one the last
    /// `--config` before `--` names, else `THEMET_CONFIG`'s, else the first of `defaultPaths` that
    /// exists and this process may read (a service's `/etc/themet/themet.conf`, readable by its
    /// group only, is no other user's). Nil when the name is empty (`--config ''`: none) or no
    /// default file is readable. Throws when a named file cannot be read, or a file is not a
    /// configuration.
    /// Blocking file I/O, once at start-up.
    public static func load(arguments: [String], environment: [String: String]) throws(ConfigurationError)
        -> ConfigurationFile?
    {
        var named = environment["THEMET_CONFIG"]
        var remaining = arguments.prefix { $0 != "--" }[...]
        while let argument = remaining.popFirst() {
            if argument == flag {
                named = remaining.popFirst() ?? named
            } else if argument.hasPrefix(flag + "=") {
                named = String(argument.dropFirst(flag.count + 1))
            }
        }
        let path: String
        if let named {
            guard !named.isEmpty else { return nil }
            path = named
        } else {
            guard let found = defaultPaths(environment: environment).first(where: { access($0, R_OK) == 0 }) else {
                return nil
            }
            path = found
        }
        return try ConfigurationFile(path: path, bytes: try contents(of: path))
    }

    /// Up to `maxBytes` + 1 bytes of `path` (one more tells a file that is too large).
    private static func contents(of path: String) throws(ConfigurationError) -> [UInt8] {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw ConfigurationError(
                flag: "--config", reason: "cannot read \(path): \(String(cString: strerror(errno)))")
        }
        defer { close(descriptor) }
        var bytes = [UInt8](repeating: 0, count: maxBytes + 1)
        var count = 0
        while count < bytes.count {
            let got = bytes.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress! + count, $0.count - count) }
            if got < 0, errno == EINTR { continue }
            guard got >= 0 else {
                throw ConfigurationError(
                    flag: "--config", reason: "cannot read \(path): \(String(cString: strerror(errno)))")
            }
            if got == 0 { break }
            count += got
        }
        return Array(bytes.prefix(count))
    }
}
