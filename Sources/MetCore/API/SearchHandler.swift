/// `/search`: the hydrated search, its generation of the Met's search in `auto` mode, and the
/// shared store it offers first pages to. One instance serves every loop; thread-safe.
final class SearchHandler: Sendable {
    let presenter: Presenter
    /// The latest search results (`objects.json`).
    let store: SharedStore
    private let mode: SearchAPIMode
    /// The generation `auto` currently uses; it moves when the other one answers 404 or 410.
    private let generation: Locked<SearchAPI>
    /// Rendered pages, shared until one of their entries changes.
    private let renders: RenderCache
    private let time: any TimeSource
    private let logger: Logger

    /// - Parameters:
    ///   - mode: `--search-api`.
    ///   - renders: where rendered pages are kept (shared with the widget's timelines).
    init(
        mode: SearchAPIMode, store: SharedStore, renders: RenderCache, presenter: Presenter, time: any TimeSource,
        logger: Logger
    ) {
        self.renders = renders
        self.mode = mode
        generation = Locked(mode == .v1 ? .v1 : .v1_1)
        self.store = store
        self.presenter = presenter
        self.time = time
        self.logger = logger
    }

    /// The pipeline of one `/search` request.
    func pipeline(_ query: SearchQuery, _ presentation: Presentation) -> SearchPipeline {
        SearchPipeline(steps: SearchSteps(query, handler: self), presentation: presentation)
    }

    /// The generation a new search starts with.
    var currentGeneration: SearchAPI { generation.withLock { $0 } }

    /// In `auto` mode, the other generation to try after `error` on `api`: v1 when v1.1 is
    /// absent (404), v1.1 when v1 is retired (410). Remembers the switch for later searches.
    func switchedGeneration(from api: SearchAPI, after error: UpstreamError) -> SearchAPI? {
        guard mode == .auto else { return nil }
        let other: SearchAPI
        switch (api, error) {
        case (.v1_1, .status(404)): other = .v1
        case (.v1, .status(410)): other = .v1_1
        default: return nil
        }
        generation.withLock { $0 = other }
        logger.warning("search: \(api.path) answered \(error.logDescription); using \(other.path) from now on")
        return other
    }

    /// Offers a page with objects to the shared store when the request may replace it (see
    /// `SearchQuery.replacesStore`); the store decides whether it is new. Cheap, on any thread:
    /// the file is written off the loops and the cooperative pool.
    func offerToStore(_ result: SearchResult, _ query: SearchQuery) {
        guard query.replacesStore, !result.objects.isEmpty else { return }
        store.offer(result.objects, from: query.storeSource)
    }

    /// The HTTP response for a hydrated page: a JSON body rendered once per distinct page and
    /// kept (`RenderCache`), in gzip for clients that accept it; an ETag derived from its parts'
    /// ETags, so a 304 renders nothing; cacheable for as long as the ID lists stay fresh, unless
    /// something is still pending. A plain hit shares one response a second, as an object hit does.
    func response(
        _ hydrated: HydratedPage, query: SearchQuery, _ presentation: Presentation, at now: Double
    ) -> Response {
        let (result, page, lists, outcome) = (hydrated.result, hydrated.page, hydrated.lists, hydrated.outcome)
        let key = result.renderKey(query: query, lists: lists)
        let identityETag = ETag.strong(for: key.utf8)
        let freshUntil = lists.map(\.freshUntil).min() ?? now
        let storedAt = lists.map(\.storedAt).min() ?? now
        let ttl = Int((freshUntil - now).rounded(.down))
        let age = max(0, Int((now - storedAt).rounded(.down)))
        let complete = result.pending.isEmpty

        func headers(etag: String) -> HTTPFields {
            var headers = HTTPFields(capacity: 10)
            headers.append("Cache-Control", complete ? "public, max-age=\(max(0, ttl))" : "no-store")
            headers.append("Age", String(age))
            headers.append("Cache-Status", Presenter.cacheStatus(outcome, ttl: max(0, ttl)))
            headers.append("ETag", etag)
            return headers
        }
        // A page with pending objects changes as they arrive: rendered for this request alone.
        guard complete else {
            if let ifNoneMatch = presentation.ifNoneMatch, ETag.ifNoneMatch(ifNoneMatch, matches: identityETag) {
                return Response(status: 304, headers: headers(etag: identityETag), cacheOutcome: outcome)
            }
            var fields = headers(etag: identityETag)
            fields.append("Content-Type", Response.jsonContentType)
            return Response(status: 200, headers: fields, body: body(result, page, query), cacheOutcome: outcome)
        }
        if !presentation.acceptsGzip, let ifNoneMatch = presentation.ifNoneMatch,
            ETag.ifNoneMatch(ifNoneMatch, matches: identityETag)
        {
            return Response(status: 304, headers: headers(etag: identityETag), cacheOutcome: outcome)
        }
        let rendered = renders.rendered(key, gzip: true) { (body(result, page, query), identityETag) }
        let gzip = presentation.acceptsGzip && rendered.gzipped != nil
        let etag = gzip ? rendered.gzippedETag ?? rendered.etag : rendered.etag
        func make() -> Response {
            var fields = headers(etag: etag)
            if rendered.gzipped != nil { fields.append("Vary", "Accept-Encoding") }
            if let ifNoneMatch = presentation.ifNoneMatch, ETag.ifNoneMatch(ifNoneMatch, matches: etag) {
                return Response(status: 304, headers: fields, cacheOutcome: outcome)
            }
            fields.append("Content-Type", Response.jsonContentType)
            if gzip { fields.append("Content-Encoding", "gzip") }
            return Response(
                status: 200, headers: fields, body: gzip ? rendered.gzipped ?? rendered.body : rendered.body,
                cacheOutcome: outcome)
        }
        guard outcome == .hit, presentation.ifNoneMatch == nil else { return make() }
        return rendered.responses.response(second: Int(now.rounded(.down)), age: age, ttl: ttl, gzip: gzip, make: make)
    }

    /// The page's JSON body.
    private func body(_ result: SearchResult, _ page: (ids: [Int], total: Int, reachable: Int), _ query: SearchQuery)
        -> [UInt8]
    {
        let next = query.offset + query.limit < page.reachable ? query.url(offset: query.offset + query.limit) : nil
        return result.body(query: query, total: page.total, next: next)
    }
}

/// One `/search` request: the search's steps, then the page as JSON.
struct SearchPipeline: Pipeline {
    var steps: SearchSteps
    let presentation: Presentation

    mutating func advance(_ resolutions: [Resolution], at now: Double) -> Step {
        switch steps.advance(resolutions) {
        case .need(let need): .need(need)
        case .failure(let response): .respond(response)
        case .page(let page): .respond(steps.handler.response(page, query: steps.query, presentation, at: now))
        }
    }
}
