import ImageHeaders

/// A picture of the Met's image host: its path there (`/CRDImages/ep/web-large/DT1567.jpg`), which
/// is also its cache key, and the bounds its bytes must keep. Judging a reply reads the bytes'
/// header, never decodes them: a body that is not a JPEG, PNG, WebP or TIFF, is cut off, or declares
/// more than `maxPixels` is `.malformed` and never stored.
public struct ImageResource: UpstreamRequest, Hashable {
    /// The path on the image host, already validated by the route (`ImagePath`).
    public let path: String
    /// The image host's validators of the copy held, when revalidating it.
    public var conditions: UpstreamValidators?
    /// The most pixels (width × height) a picture may declare.
    public let maxPixels: Int
    /// The most bytes a picture may have (the transport bounds the wire too).
    public let maxBytes: Int

    public init(path: String, maxPixels: Int, maxBytes: Int, conditions: UpstreamValidators? = nil) {
        self.path = path
        self.maxPixels = maxPixels
        self.maxBytes = maxBytes
        self.conditions = conditions
    }

    public var query: [RequestTarget.QueryItem] { [] }
    public var cacheKey: String { path }
    public var kind: ResourceKind { .image }

    /// A judged reply of the image host.
    public enum Answer: Sendable, Equatable {
        /// New bytes, with what their header says and the host's lifetime (`max-age`, seconds;
        /// nil when it sent none).
        case image(bytes: [UInt8], details: ImageDetails, maxAge: Double?)
        /// 304: the copy held is current; its validators (the host may send new ones) and lifetime.
        case notModified(UpstreamValidators, maxAge: Double?)
        /// 404 or 410: the host has no such picture (kept as a negative entry).
        case notFound
    }

    public func judge(_ reply: UpstreamReply) -> Result<Answer, UpstreamError> {
        let maxAge = Self.maxAge(in: reply.cacheControl)
        switch reply.status {
        case 200:
            guard reply.body.count <= maxBytes else {
                return .failure(.malformed("picture larger than \(maxBytes) bytes"))
            }
            switch ImageHeader.read(reply.body) {
            case .failure(let error):
                return .failure(.malformed("picture \(error.description)"))
            case .success(let header):
                guard header.pixels <= maxPixels else {
                    return .failure(
                        .malformed("picture of \(header.width) × \(header.height) pixels, more than \(maxPixels)"))
                }
                let details = ImageDetails(
                    contentType: header.format.mediaType, width: header.width, height: header.height,
                    upstream: reply.validators)
                return .success(.image(bytes: reply.body, details: details, maxAge: maxAge))
            }
        case 304 where conditions != nil:
            var validators = conditions ?? UpstreamValidators()
            if let etag = reply.validators.etag { validators.etag = etag }
            if let date = reply.validators.lastModified { validators.lastModified = date }
            return .success(.notModified(validators, maxAge: maxAge))
        case 404, 410:
            return .success(.notFound)
        case 403 where reply.looksLikeHTML:
            return .failure(.blocked)
        default:
            return .failure(.status(reply.status))
        }
    }

    /// Whether `entry`, a picture entry that did not come from this process's fetches (a
    /// snapshot's), is one `judge` could have stored within these bounds: a 404 without bytes, or
    /// a 200 of at most `maxBytes` whose bytes read as a whole picture of at most `maxPixels`,
    /// of the type and size its details say, under their strong ETag. What such an entry must
    /// be before it is kept, served or decoded.
    public static func admits(_ entry: CacheEntry, maxPixels: Int, maxBytes: Int) -> Bool {
        guard entry.kind == .image else { return false }
        guard entry.status == 200 else { return entry.status == 404 && entry.body.isEmpty }
        guard entry.body.count <= maxBytes, case .image(let details) = entry.details,
            ETag.strong(for: entry.body) == entry.etag, case .success(let header) = ImageHeader.read(entry.body)
        else { return false }
        return header.pixels <= maxPixels && header.format.mediaType == details.contentType
            && header.width == details.width && header.height == details.height
    }

    public static func outcome(of answer: Answer) -> UpstreamOutcome {
        answer == .notFound ? .notFound : .ok
    }

    public static func logSummary(of answer: Answer) -> String {
        switch answer {
        case .image(let bytes, let details, _): "200, \(bytes.count) bytes, \(details.width) × \(details.height)"
        case .notModified: "304, unchanged"
        case .notFound: "404"
        }
    }

    /// The `max-age` directive of a `Cache-Control` value, in seconds (0 for `no-cache` or
    /// `no-store`); nil without either.
    static func maxAge(in cacheControl: String?) -> Double? {
        guard let cacheControl else { return nil }
        for directive in cacheControl.lowercased().split(separator: ",") {
            let trimmed = directive.trimmingSpaces()
            if trimmed == "no-cache" || trimmed == "no-store" { return 0 }
            if trimmed.hasPrefix("max-age="), let seconds = Int(trimmed.dropFirst("max-age=".count)), seconds >= 0 {
                return Double(seconds)
            }
        }
        return nil
    }
}
