import MetEngine

/// One `/search` request: the page kept for its query if memory still holds, fresh, what it was
/// made from; else the search's steps, the page offered to the shared store, then the page as JSON
/// (rendered once, gzip once, shared, and kept for its query).
struct SearchPipeline: Pipeline {
    private var steps: SearchSteps
    private let presentation: Presentation
    private let presenter: Presenter
    private let store: SharedStore
    /// Search pages and timelines.
    private let renders: Renders
    /// The page kept for this query, until its entries have been checked.
    private var kept: Renders.Kept?
    /// Whether the kept page's entries have been asked for.
    private var checking = false

    init(
        _ query: SearchQuery, _ presentation: Presentation, generations: SearchGenerations, presenter: Presenter,
        store: SharedStore, renders: Renders
    ) {
        steps = SearchSteps(query, generations: generations, presenter: presenter)
        self.presentation = presentation
        self.presenter = presenter
        self.store = store
        self.renders = renders
        kept = renders.kept(for: SearchPageRequest(query: query, api: steps.api))
    }

    mutating func advance(_ resolutions: [Resolution], at now: Double) -> Step {
        if let kept {
            guard checking else {
                checking = true
                return .peek(kept.entries, touch: kept.touches(at: now))
            }
            self.kept = nil
            if let lists = kept.lists(in: resolutions) {
                return .respond(presenter.response(kept.rendered, bounds: lists, outcome: .hit, presentation, at: now))
            }
            return advance([], at: now)  // Something changed: the search's steps, from the start.
        }
        switch steps.advance(resolutions) {
        case .need(let need): return .need(need)
        case .failure(let response): return .respond(response)
        case .page(let page):
            store.offer(page.result, from: steps.query)
            return .respond(response(page, at: now))
        }
    }

    /// The HTTP response for a hydrated page (see `Presenter.composite`): its ETag and freshness
    /// those of its ID lists, `no-store` while something is pending. A complete page is also kept
    /// for its query, with what it was made from, so that asking again checks its entries instead
    /// of making it again.
    private func response(_ hydrated: HydratedPage, at now: Double) -> Response {
        let (result, page, lists, outcome) = (hydrated.result, hydrated.page, hydrated.lists, hydrated.outcome)
        let query = steps.query
        let next = query.offset + query.limit < page.reachable ? query.url(offset: query.offset + query.limit) : nil
        let (response, rendered) = presenter.composite(
            key: result.renderKey(query: query, lists: lists), complete: result.pending.isEmpty, bounds: lists,
            outcome: outcome, renders: renders, presentation, at: now, link: next.map { "<\($0)>; rel=\"next\"" }
        ) { result.body(query: query, total: page.total, next: next) }
        if let rendered {
            renders.keep(
                Renders.Kept(rendered, madeFrom: hydrated.sources),
                for: SearchPageRequest(query: query, api: hydrated.api))
        }
        return response
    }
}

extension Renders.Kept {
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
