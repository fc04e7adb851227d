import MetCore
import MetEngine

/// An offline upstream: answers Met paths from a fixture directory laid out like the Met's own
/// paths (`Fixtures/` in this repository), with the same statuses and bodies the Met gives.
public struct FixtureDirectoryUpstream: Upstream {
    private let archive: FixtureArchive
    private let images: FixtureImages
    private let directory: String

    /// Loads the directory once, with synthetic records for the IDs `1...syntheticCount` it
    /// lacks (as `met-fixture-server --synthetic`). Throws when it is not a fixture tree.
    public init(directory: String, syntheticCount: Int = 0) throws {
        self.archive = try FixtureArchive(directory: directory, syntheticCount: syntheticCount)
        images = FixtureImages(archive: archive)
        self.directory = directory
    }

    public var location: String { "fixtures at \(directory)" }

    public func get(
        path: String, query: [RequestTarget.QueryItem], conditions: UpstreamValidators?
    ) async throws(UpstreamError) -> UpstreamReply {
        if Task.isCancelled { throw .cancelled }
        guard path.hasPrefix(FakeMet.imagePrefix) else { return archive.answer(path: path, query: query) }
        // The image host's paths: the pictures the records name, with the host's validators.
        do {
            guard let image = try await images.image(at: path) else {
                return UpstreamReply(status: 404, contentType: "text/html", body: Array("Not Found".utf8))
            }
            let validators = UpstreamValidators(etag: image.etag, lastModified: image.lastModified)
            if let conditions, conditions.etag == image.etag {
                return UpstreamReply(
                    status: 304, contentType: nil, body: [], validators: validators,
                    cacheControl: "max-age=\(FixtureImages.maxAge)")
            }
            return UpstreamReply(
                status: 200, contentType: image.contentType, body: image.bytes, validators: validators,
                cacheControl: "max-age=\(FixtureImages.maxAge)")
        } catch {
            return UpstreamReply(status: 500, contentType: "text/plain", body: Array("\(error)".utf8))
        }
    }
}
