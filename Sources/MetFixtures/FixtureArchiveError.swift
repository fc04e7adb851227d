import MetCore
import MetEngine

/// Why a fixture directory could not be loaded. The message names the file at fault.
public enum FixtureArchiveError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The directory has no `public/collection/v1` folder, so it is not a fixture directory.
    case missingTree(directory: String)
    /// A file the archive needs could not be read.
    case unreadable(path: String)
    /// A file is not what its name promises (bad JSON, an object file whose `objectID` differs
    /// from its name, …).
    case malformed(path: String, reason: String)

    public var description: String {
        switch self {
        case .missingTree(let directory):
            "\(directory) is not a fixture directory: it has no public/collection/v1 folder"
        case .unreadable(let path):
            "cannot read fixture file \(path)"
        case .malformed(let path, let reason):
            "fixture file \(path) is malformed: \(reason)"
        }
    }
}
