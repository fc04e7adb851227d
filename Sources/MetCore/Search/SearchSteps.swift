import MetEngine

/// A hydrated search page with what the response needs besides the objects.
struct HydratedPage {
    var result: SearchResult
    var page: (ids: [Int], total: Int, reachable: Int)
    /// The ID-list entries the page came from (their freshness bounds the response's).
    var lists: [CacheEntry]
    /// The least cached outcome among the entries (see `Presenter.combine`).
    var outcome: CacheOutcome
    /// Every entry the page was made from: the ID lists, then the objects.
    var sources: [CacheEntry]
    /// The generation the ID lists came from.
    var api: SearchAPI
}

/// The steps of a hydrated search, shared by `/search` and the widget's timeline: the ID lists
/// (v1.1's pages or v1's whole list, switching generation in `auto` mode when one is gone), then
/// the page's objects, waited for until the query's `wait` while the rest fill in the background.
struct SearchSteps: Sendable {
    /// What the steps do next.
    enum Next {
        case need(Need)
        /// The page, hydrated as far as the wait allowed.
        case page(HydratedPage)

        /// The response to send instead (an upstream failure, or 499).
        case failure(Response)
    }

    private enum Stage: Sendable {
        case start
        /// Waiting for the ID lists the window reads first (they tell the total).
        case firstLists
        /// Waiting for the rest of the ID lists (v1.1 whole-list sorts).
        case remainingLists
        /// Waiting for the page's objects.
        case objects(ids: [Int], total: Int, reachable: Int)
    }

    let query: SearchQuery
    /// For the failure of an object.
    private let presenter: Presenter
    private var stage = Stage.start
    /// The ID lists, and the generation they come from.
    private var reader: IDListReader

    init(_ query: SearchQuery, generations: SearchGenerations, presenter: Presenter) {
        self.query = query
        self.presenter = presenter
        reader = IDListReader(generations: generations, presenter: presenter, mayMove: true)
    }

    /// The generation the ID lists come from.
    var api: SearchAPI { reader.api }

    private var window: SearchWindow { SearchWindow(query: query, api: api) }

    mutating func advance(_ resolutions: [Resolution]) -> Next {
        switch stage {
        case .start:
            return ask(window.firstResources(), then: .firstLists)
        case .firstLists, .remainingLists:
            switch reader.read(resolutions) {
            case .read: break
            case .switched: return ask(window.firstResources(), then: .firstLists)
            case .failure(let response): return .failure(response)
            }
            if case .firstLists = stage {
                let remaining = window.remainingResources(total: reader.lists.values.first?.total ?? 0)
                if !remaining.isEmpty { return ask(remaining, then: .remainingLists) }
            }
            let page = window.page(from: reader.lists)
            stage = .objects(ids: page.ids, total: page.total, reachable: page.reachable)
            return .need(Need(page.ids.map { .object(id: $0) }, wait: query.wait))
        case .objects(let ids, let total, let reachable):
            if let index = resolutions.firstIndex(where: \.isRefused) {
                return .failure(presenter.failure(resolutions[index], of: .object(id: ids[index])))
            }
            var entries: [Int: CacheEntry] = [:]
            var sources = reader.entries
            var outcome = reader.outcome
            for (id, resolution) in zip(ids, resolutions) {
                if case .entry(let entry, let how) = resolution {
                    entries[id] = entry
                    sources.append(entry)
                    outcome = Presenter.combine(outcome, Presenter.shownInComposite(how))
                } else {
                    outcome = Presenter.combine(outcome, .miss)
                }
            }
            return .page(
                HydratedPage(
                    result: SearchResult(ids: ids, entries: entries, query: query), page: (ids, total, reachable),
                    lists: reader.entries, outcome: outcome,
                    sources: sources, api: api))
        }
    }

    private mutating func ask(_ resources: [MetResource], then next: Stage) -> Next {
        stage = next
        return .need(reader.ask(resources))
    }

}
