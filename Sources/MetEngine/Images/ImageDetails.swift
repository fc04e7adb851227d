/// What the server knows of a stored picture beyond its bytes, read from them once when stored
/// (`ImageHeader`) or sent with them by the image host: enough to serve it, size it for IIIF and
/// revalidate it with a conditional request.
public struct ImageDetails: Sendable, Equatable {
    /// The media type its magic bytes name (`image/jpeg`), never the type the host claimed.
    public var contentType: String
    /// Pixels across and down, from its header.
    public var width: Int
    public var height: Int
    /// The image host's validators of these bytes, sent back when the copy expires.
    public var upstream: UpstreamValidators

    public init(contentType: String, width: Int, height: Int, upstream: UpstreamValidators) {
        self.contentType = contentType
        self.width = width
        self.height = height
        self.upstream = upstream
    }

    /// Bytes the details take in memory, charged to the entry's cost.
    var cost: Int {
        contentType.utf8.count + (upstream.etag?.utf8.count ?? 0) + (upstream.lastModified?.utf8.count ?? 0)
    }
}
