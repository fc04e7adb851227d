import MetEngine

/// Responses whose body is made from several entries (a `/search` page, a batch of objects, a
/// IIIF manifest): rendered once per distinct body and kept (`RenderCache`), with a gzip copy; an
/// ETag that is the hash of what the body is a function of, so a 304 renders nothing; fresh for
/// as long as the entries that bound it stay fresh.
extension Presenter {
    /// The response for the body `render` makes, as of `now`.
    ///
    /// - Parameters:
    ///   - key: names every input of the body byte for byte (canonical parameters and the ETags of
    ///     the entries); its hash is the identity ETag, and the render is kept under it.
    ///   - complete: false while something the body lists is still pending: it changes as that
    ///     arrives, so it is made for this request alone and sent `no-store`.
    ///   - bounds: the entries whose freshness bounds the response's: `Age` is that of the
    ///     oldest, and `max-age` runs from its fetch to the earliest end of freshness among them
    ///     (so `max-age` − `Age` is the least freshness left).
    ///   - outcome: the least cached outcome among the entries (see `combine`).
    ///   - renders: where complete bodies are kept.
    ///   - link: the `Link` field to send with the body (a page's `rel="next"`), a function of `key`.
    /// - Returns: the response, and the render when a complete body was made or found (nil for a
    ///   pending body, or a 304 answered without rendering), for a caller that keeps it for its request.
    func composite(
        key: String, complete: Bool, bounds: [CacheEntry], outcome: CacheOutcome, renders: Renders,
        _ presentation: Presentation, at now: Double, contentType: String = Response.jsonContentType,
        link: String? = nil, render: () -> [UInt8]
    ) -> (response: Response, rendered: Renders.Rendered?) {
        let identityETag = ETag.strong(for: key.utf8)
        let freshness = RenderFreshness(bounds, at: now)
        if !complete || !presentation.acceptsGzip, let ifNoneMatch = presentation.ifNoneMatch,
            ETag.ifNoneMatch(ifNoneMatch, matches: identityETag)
        {
            var headers = freshness.headers(etag: identityETag, outcome, complete: complete)
            if let link { headers.append("Link", link) }
            return (freshness.dated(Response(status: 304, headers: headers, cacheOutcome: outcome)), nil)
        }
        guard complete else {
            var fields = freshness.headers(etag: identityETag, outcome, complete: false)
            if let link { fields.append("Link", link) }
            fields.append("Content-Type", contentType)
            return (freshness.dated(Response(status: 200, headers: fields, body: render(), cacheOutcome: outcome)), nil)
        }
        let rendered = renders.rendered(key, gzip: true, link: link) { (render(), identityETag) }
        return (
            response(rendered, bounds: bounds, outcome: outcome, presentation, at: now, contentType: contentType),
            rendered
        )
    }

    /// How a record's outcome shows in a response made of several: one fetched in the background
    /// shows as stored whether it led or joined its fetch; one read from the disk or the shared
    /// tier, or served stale, says so.
    static func shownInComposite(_ outcome: CacheOutcome) -> CacheOutcome {
        switch outcome {
        case .hit, .diskHit, .sharedHit, .revalidating, .stale: outcome
        case .miss, .collapsed, .none: .miss
        }
    }

    /// The response for a complete body's render, bounded by `bounds` as in `composite`. A plain
    /// hit shares one response a second, as an object hit does.
    func response(
        _ rendered: Renders.Rendered, bounds: [CacheEntry], outcome: CacheOutcome,
        _ presentation: Presentation, at now: Double, contentType: String = Response.jsonContentType
    ) -> Response {
        let freshness = RenderFreshness(bounds, at: now)
        let gzip = presentation.acceptsGzip && rendered.gzipped != nil
        let etag = gzip ? rendered.gzippedETag ?? rendered.etag : rendered.etag
        func make() -> Response {
            var fields = freshness.headers(etag: etag, outcome, complete: true)
            if rendered.gzipped != nil { fields.append("Vary", "Accept-Encoding") }
            if let link = rendered.link { fields.append("Link", link) }
            if let ifNoneMatch = presentation.ifNoneMatch, ETag.ifNoneMatch(ifNoneMatch, matches: etag) {
                return freshness.dated(Response(status: 304, headers: fields, cacheOutcome: outcome))
            }
            fields.append("Content-Type", contentType)
            if gzip { fields.append("Content-Encoding", "gzip") }
            return freshness.dated(
                Response(
                    status: 200, headers: fields, body: gzip ? rendered.gzipped ?? rendered.body : rendered.body,
                    cacheOutcome: outcome))
        }
        guard outcome == .hit, presentation.ifNoneMatch == nil else { return make() }
        return hitResponses.response(
            for: rendered.serial, second: Int(now.rounded(.down)), age: freshness.age, ttl: freshness.ttl, gzip: gzip,
            make: make)
    }
}

/// How long a composite body stays fresh and how old it is: those of the entries that bound it,
/// in whole seconds; its `Date` is when the oldest of them was fetched.
private struct RenderFreshness {
    /// The least freshness left (for `Cache-Status` and the shared responses' second).
    var ttl: Int
    var age: Int
    /// From the oldest fetch to the earliest end of freshness: `max-age`.
    var lifetime: Int
    /// The oldest entry's fetch (`CacheEntry.fetchedSecond`); nil when no entry bounds the body.
    var date: Int?

    init(_ entries: [CacheEntry], at now: Double) {
        let freshUntil = entries.map(\.freshUntil).min() ?? now
        let second = Int(now.rounded(.down))
        date = entries.map(\.fetchedSecond).min()
        ttl = Int((freshUntil - now).rounded(.down))
        age = max(0, second - (date ?? second))
        lifetime = max(0, Int(freshUntil.rounded(.down)) - (date ?? second))
    }

    /// `response` carrying `date`.
    func dated(_ response: Response) -> Response {
        var dated = response
        dated.date = date
        return dated
    }

    func headers(etag: String, _ outcome: CacheOutcome, complete: Bool) -> HTTPFields {
        var headers = HTTPFields(capacity: 10)
        headers.append("Cache-Control", complete ? "max-age=\(lifetime)" : "no-store")
        headers.append("Age", String(age))
        headers.append("Cache-Status", Presenter.cacheStatus(outcome, ttl: max(0, ttl)))
        headers.append("ETag", etag)
        return headers
    }
}
