import Foundation

/// Files of the repository itself, found from this file's path, for tests that read them.
enum Repository {
    /// The directory holding `Package.swift`.
    static let root: URL = {
        var url = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        while !FileManager.default.fileExists(atPath: url.appendingPathComponent("Package.swift").path) {
            let parent = url.deletingLastPathComponent()
            precondition(parent.path != url.path, "no Package.swift above \(#filePath)")
            url = parent
        }
        return url
    }()

    /// The `Fixtures` folder.
    static var fixtures: String { root.appendingPathComponent("Fixtures").path }
}
