import MetEngine

/// Serves the explorer's files (`ExplorerAsset`), each made once into an entry with its ETag and
/// gzip copy. `no-cache`: a browser revalidates (a 304) on each visit, so a new build shows at once
/// and the page never runs with a script of another build. Every file carries the
/// `Content-Security-Policy` that confines the page to this server. Any thread.
struct ExplorerHandler: Sendable {
    /// What the explorer may load: its own files, JSON and pictures from this server (which
    /// fetches the Met's pictures itself: `/images`, `/iiif`); no inline script or style, no
    /// frames, no plugins.
    static let contentSecurityPolicy =
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
        + "connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

    private let entries: [ExplorerAsset: CacheEntry]

    /// - Parameters:
    ///   - storedAt: when the server started (seconds since 1970).
    ///   - compress: gzip, for the compressed copies; nil: identity only.
    init(storedAt: Double, compress: (@Sendable ([UInt8]) -> [UInt8])?) {
        var entries: [ExplorerAsset: CacheEntry] = [:]
        for asset in ExplorerAsset.allCases {
            entries[asset] = CacheEntry(
                key: asset.path, kind: .document, status: 200, body: asset.bytes, storedAt: storedAt,
                policy: FreshnessPolicy(), compress: compress)
        }
        self.entries = entries
    }

    /// The response for `asset` (a 304 when `If-None-Match` matches).
    func response(_ asset: ExplorerAsset, _ presentation: Presentation, presenter: Presenter) -> Response {
        guard let entry = entries[asset] else { return Problem(.internalError, "\(asset.path) is missing.").response }
        var response = presenter.present(
            entry, presentation, outcome: .none, at: entry.storedAt, contentType: asset.contentType)
        response.headers.set("Cache-Control", "no-cache")
        response.headers.remove("Age")
        response.headers.append("Content-Security-Policy", Self.contentSecurityPolicy)
        response.headers.append("X-Content-Type-Options", "nosniff")
        response.headers.append("Referrer-Policy", "same-origin")
        return response
    }
}
