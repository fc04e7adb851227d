/// `/search`: the hydrated search, its generation of the Met's search in `auto` mode, and the
/// shared store it offers first pages to. One instance serves every loop; thread-safe.
final class SearchHandler: Sendable {
    let presenter: Presenter
    /// The latest search results (`objects.json`).
    let store: SharedStore
    private let mode: SearchAPIMode
    /// The generation `auto` currently uses; it moves when the other one answers 404 or 410.
    private let generation: Locked<SearchAPI>
    private let time: any TimeSource
    private let logger: Logger

    /// - Parameter mode: `--search-api`.
    init(mode: SearchAPIMode, store: SharedStore, presenter: Presenter, time: any TimeSource, logger: Logger) {
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

    /// The HTTP response for a hydrated page: JSON body with its own ETag (derived from its
    /// parts' ETags, so a 304 renders nothing); cacheable for as long as the ID list stays fresh,
    /// unless something is still pending.
    func response(_ hydrated: HydratedPage, query: SearchQuery, _ presentation: Presentation) -> Response {
        let now = time.now()
        let (result, page, lists, outcome) = (hydrated.result, hydrated.page, hydrated.lists, hydrated.outcome)
        let next = query.offset + query.limit < page.reachable ? query.url(offset: query.offset + query.limit) : nil
        let etag = result.etag(query: query, lists: lists)
        let freshUntil = lists.map(\.freshUntil).min() ?? now
        let storedAt = lists.map(\.storedAt).min() ?? now
        let remaining = max(0, Int((freshUntil - now).rounded(.down)))
        var headers = HTTPFields()
        headers.append("Cache-Control", result.pending.isEmpty ? "public, max-age=\(remaining)" : "no-store")
        headers.append("Age", String(max(0, Int((now - storedAt).rounded(.down)))))
        headers.append("Cache-Status", Presenter.cacheStatus(outcome, ttl: remaining))
        headers.append("ETag", etag)
        if let ifNoneMatch = presentation.ifNoneMatch, ETag.ifNoneMatch(ifNoneMatch, matches: etag) {
            return Response(status: 304, headers: headers, cacheOutcome: outcome)
        }
        headers.append("Content-Type", Response.jsonContentType)
        let body = result.body(query: query, total: page.total, next: next)
        return Response(status: 200, headers: headers, body: body, cacheOutcome: outcome)
    }
}

/// One `/search` request: the search's steps, then the page as JSON.
struct SearchPipeline: Pipeline {
    var steps: SearchSteps
    let presentation: Presentation

    mutating func advance(_ resolutions: [Resolution]) -> Step {
        switch steps.advance(resolutions) {
        case .need(let need): .need(need)
        case .failure(let response): .respond(response)
        case .page(let page): .respond(steps.handler.response(page, query: steps.query, presentation))
        }
    }
}
