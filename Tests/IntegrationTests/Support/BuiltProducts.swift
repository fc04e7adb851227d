import Foundation

/// Finds the executables `swift build` produced, next to the running test bundle.
enum BuiltProducts {
    /// The directory holding `themet` and `met-fixture-server` (the build's bin path).
    static let directory: URL = {
        if let override = ProcessInfo.processInfo.environment["THEMET_BIN_DIR"] {
            return URL(fileURLWithPath: override)
        }
        var candidate = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        for _ in 0..<4 {
            if FileManager.default.isExecutableFile(atPath: candidate.appendingPathComponent("themet").path) {
                return candidate
            }
            candidate.deleteLastPathComponent()
        }
        return packageRoot.appendingPathComponent(".build/debug")
    }()

    /// The repository root (for `Fixtures/`).
    static let packageRoot: URL = {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
    }()

    static var themet: URL { directory.appendingPathComponent("themet") }

    /// The environment a started process gets: this one's, with no configuration file read
    /// (`THEMET_CONFIG` empty) unless the test names one: a developer's own
    /// `~/.config/themet/themet.conf` must not change what a test's server does.
    static var environment: [String: String] {
        var environment = ProcessInfo.processInfo.environment
        environment["THEMET_CONFIG"] = ""
        return environment
    }
    static var fixtureServer: URL { directory.appendingPathComponent("met-fixture-server") }
    static var fixtures: URL { packageRoot.appendingPathComponent("Fixtures") }
}
