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
    static var fixtureServer: URL { directory.appendingPathComponent("met-fixture-server") }
    static var fixtures: URL { packageRoot.appendingPathComponent("Fixtures") }
}
