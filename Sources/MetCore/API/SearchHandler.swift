/// `/search`: the hydrated search, its generation of the Met's search in `auto` mode, and the
/// shared store it offers first pages to. One instance serves every loop; thread-safe.
final class SearchHandler: Sendable {
    /// Where search pages and widget timelines are rendered and kept.
    typealias Renders = RenderCache<PageRequest>

    let presenter: Presenter
    /// The latest search results (`objects.json`).
    let store: SharedStore
    private let mode: SearchAPIMode
    /// The generation `auto` currently uses; it moves when the other one answers 404 or 410.
    private let generation: Locked<SearchAPI>
    /// Rendered pages, shared until one of their entries changes.
    private let renders: Renders
    private let time: any TimeSource
    private let logger: Logger

    /// - Parameters:
    ///   - mode: `--search-api`.
    ///   - renders: where rendered pages are kept (shared with the widget's timelines).
    init(
        mode: SearchAPIMode, store: SharedStore, renders: Renders, presenter: Presenter, time: any TimeSource,
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

    /// The pipeline of one `/search` request: the page kept for its query when memory still
    /// holds what it was made from, else the search's steps.
    func pipeline(_ query: SearchQuery, _ presentation: Presentation) -> SearchPipeline {
        let steps = SearchSteps(query, handler: self)
        return SearchPipeline(
            steps: steps, presentation: presentation, kept: kept(for: query, api: steps.api))
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

    /// What a kept page is filed under: everything its bytes depend on besides its entries (the
    /// query, the generation its lists came from). The query includes `store`, so a page kept
    /// without offering it to the store never makes a request that would offer it skip the offer.
    struct PageRequest: Hashable, Sendable {
        var query: SearchQuery
        var api: SearchAPI
    }

    /// The page kept for `query` on `api` by an earlier request, if any (see `response`).
    private func kept(for query: SearchQuery, api: SearchAPI) -> Renders.Kept? {
        renders.kept(for: PageRequest(query: query, api: api))
    }

    /// The HTTP response for a hydrated page (see `Presenter.composite`): its ETag and freshness
    /// those of its ID lists, `no-store` while something is pending. A complete page is also kept
    /// for its query, with what it was made from, so that asking again checks its entries instead
    /// of making it again.
    func response(
        _ hydrated: HydratedPage, query: SearchQuery, _ presentation: Presentation, at now: Double
    ) -> Response {
        let (result, page, lists, outcome) = (hydrated.result, hydrated.page, hydrated.lists, hydrated.outcome)
        let next = query.offset + query.limit < page.reachable ? query.url(offset: query.offset + query.limit) : nil
        let (response, rendered) = presenter.composite(
            key: result.renderKey(query: query, lists: lists), complete: result.pending.isEmpty, bounds: lists,
            outcome: outcome, renders: renders, presentation, at: now, link: next.map { "<\($0)>; rel=\"next\"" }
        ) { result.body(query: query, total: page.total, next: next) }
        if let rendered {
            renders.keep(
                Renders.Kept(rendered, madeFrom: hydrated.sources),
                for: PageRequest(query: query, api: hydrated.api))
        }
        return response
    }
}

/// One `/search` request: the page kept for its query if it still holds, else the search's
/// steps, then the page as JSON.
struct SearchPipeline: Pipeline {
    private var steps: SearchSteps
    private let presentation: Presentation
    /// The page kept for this query, until its entries have been checked.
    private var kept: SearchHandler.Renders.Kept?
    /// Whether the kept page's entries have been asked for.
    private var checking = false

    init(steps: SearchSteps, presentation: Presentation, kept: SearchHandler.Renders.Kept?) {
        self.steps = steps
        self.presentation = presentation
        self.kept = kept
    }

    mutating func advance(_ resolutions: [Resolution], at now: Double) -> Step {
        if let kept {
            guard checking else {
                checking = true
                return .peek(kept.entries, touch: kept.touches(at: now))
            }
            self.kept = nil
            if let lists = kept.lists(in: resolutions) {
                return .respond(
                    steps.handler.presenter.response(kept.rendered, bounds: lists, outcome: .hit, presentation, at: now)
                )
            }
            return advance([], at: now)  // Something changed: the search's steps, from the start.
        }
        switch steps.advance(resolutions) {
        case .need(let need): return .need(need)
        case .failure(let response): return .respond(response)
        case .page(let page):
            return .respond(steps.handler.response(page, query: steps.query, presentation, at: now))
        }
    }
}

extension SearchHandler.Renders.Kept {
    /// The ID-list entries of a kept page, when `resolutions` (of a peek at its entries) found
    /// them all; nil when memory no longer holds one, or one is no longer fresh.
    fileprivate func lists(in resolutions: [Resolution]) -> [CacheEntry]? {
        var lists: [CacheEntry] = []
        for resolution in resolutions {
            guard case .entry(let entry, _) = resolution else { return nil }
            if entry.kind != .object { lists.append(entry) }
        }
        return lists
    }
}
