import MetCore
import MetEngine

/// An offline upstream: answers Met paths from a fixture directory laid out like the Met's own
/// paths (`Fixtures/` in this repository), with the same statuses and bodies the Met gives.
public struct FixtureDirectoryUpstream: Upstream {
    private let archive: FixtureArchive
    private let directory: String

    /// Loads the directory once. Throws when it is not a fixture tree.
    public init(directory: String) throws {
        self.archive = try FixtureArchive(directory: directory)
        self.directory = directory
    }

    public var location: String { "fixtures at \(directory)" }

    public func get(
        path: String, query: [RequestTarget.QueryItem], conditions: UpstreamValidators?
    ) async throws(UpstreamError) -> UpstreamReply {
        if Task.isCancelled { throw .cancelled }
        return archive.answer(path: path, query: query)
    }
}
