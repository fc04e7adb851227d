import MetEngine

/// `/search`: a hydrated search, one page of records.
enum SearchRoutes {
    static let search = RouteEntry(.exact(["/search"]), label: .search) { request, services throws(Problem) in
        var query = try SearchQuery(request.target)
        // A HEAD never replaces the latest results.
        if request.isHead { query.store = false }
        return services.start(
            SearchPipeline(
                query, request.presentation(), generations: services.generations, presenter: services.presenter,
                store: services.store, renders: services.searchRenders),
            for: request)
    }
}
