import Foundation

/// A directory of its own under the system's temporary directory, removed with everything in it
/// when the value goes away.
public final class TemporaryDirectory: Sendable {
    /// The directory's path.
    public let path: String

    /// - Parameter label: part of the directory's name, to tell whose it is.
    public init(_ label: String = "test") {
        path =
            FileManager.default.temporaryDirectory.appendingPathComponent("themet-\(label)-\(UUID().uuidString)")
            .path
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    /// The names of the files in it, sorted.
    public var files: [String] { ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).sorted() }

    deinit { try? FileManager.default.removeItem(atPath: path) }
}
