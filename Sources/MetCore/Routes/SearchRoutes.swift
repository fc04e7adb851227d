import MetEngine

/// `/search`: a hydrated search, one page of records, from the Met's search; from this server's
/// index with `source=local`, or when the Met cannot answer (`LocalSearchHandler`).
enum SearchRoutes {
    static let search = RouteEntry(.exact(["/search"]), label: .search) { request, services throws(Problem) in
        var query = try SearchQuery(request.target, allowingLocal: true)
        // A HEAD never replaces the latest results.
        if request.isHead { query.store = false }
        let presentation = request.presentation()
        let local = services.localSearch
        if query.source == .local { return local.answer(query, presentation) }
        let answer = services.start(
            SearchPipeline(
                query, presentation, generations: services.generations, presenter: services.presenter,
                store: services.store, renders: services.searchRenders),
            for: request)
        guard local.fallsBack else { return answer }
        // A memory hit that answered (the hot path) makes no closures.
        if case .ready(let response) = answer, !LocalSearchHandler.metFailed(response) { return answer }
        return answer.recovering(when: { LocalSearchHandler.metFailed($0) }) { [query] failure in
            local.standIn(for: query, presentation, after: failure)
        }
    }
}
