import MetEngine

/// `DELETE /cache/objects/{id}` and `DELETE /cache/search?…`: keys out of every tier, for a client
/// the purge rule lets purge (`PurgeRule`).
enum CacheRoutes {
    /// One object's record.
    static let purgeObject = RouteEntry(.segment(prefix: "/cache/objects/"), methods: .deleting, label: .purge) {
        request, services throws(Problem) in
        try services.purgeRule.check(request.request)
        try request.target.allowOnly([])
        return services.purges.purge([MetResource.object(id: try ObjectID.parse(request.segment)).cacheKey])
    }

    /// The ID lists of a search: its v1 list and every v1.1 page of its window (the parameters are
    /// `/search`'s, validated as there).
    static let purgeSearch = RouteEntry(.exact(["/cache/search"]), methods: .deleting, label: .purge) {
        request, services throws(Problem) in
        try services.purgeRule.check(request.request)
        let query = try SearchQuery(request.target)
        return services.purges.purge(
            [SearchAPI.v1, .v1_1].flatMap { SearchWindow(query: query, api: $0).everyResource() }.map(\.cacheKey))
    }
}
