import MetEngine

/// `DELETE /cache/objects/{id}` and `DELETE /cache/search?…`: keys out of every tier, or with
/// `soft=true` marked expired in every tier; `GET /cache/snapshot`: the persistent tier as one file;
/// each for a client the purge rule lets purge (`PurgeRule`).
enum CacheRoutes {
    /// One object's record.
    static let purgeObject = RouteEntry(.segment(prefix: "/cache/objects/"), methods: .deleting, label: .purge) {
        request, services throws(Problem) in
        try services.purgeRule.check(request.request, for: "Purging")
        try request.target.allowOnly(["soft"], known: "A purge takes only soft (true or false).")
        let key = MetResource.object(id: try ObjectID.parse(request.segment)).cacheKey
        return services.purges.purge([key], soft: try flag("soft", of: request.target))
    }

    /// The ID lists of a search: its v1 list and every v1.1 page of its window (the parameters are
    /// `/search`'s, validated as there, and `soft`).
    static let purgeSearch = RouteEntry(.exact(["/cache/search"]), methods: .deleting, label: .purge) {
        request, services throws(Problem) in
        try services.purgeRule.check(request.request, for: "Purging")
        try request.target.rejectRepeats(of: ["soft"])
        var target = request.target
        target.query.removeAll { $0.name == "soft" }
        let query = try SearchQuery(target)
        return services.purges.purge(
            [SearchAPI.v1, .v1_1].flatMap { SearchWindow(query: query, api: $0).everyResource() }.map(\.cacheKey),
            soft: try flag("soft", of: request.target))
    }

    /// A snapshot of the persistent tier (`themet export`'s format), with the picture files when
    /// `images=true`, for whoever may purge.
    static let snapshot = RouteEntry(.exact(["/cache/snapshot"]), label: .snapshot) {
        request, services throws(Problem) in
        try services.purgeRule.check(request.request, for: "Taking a snapshot")
        try request.target.allowOnly(["images"], known: "A snapshot takes only images (true or false).")
        return services.snapshots.snapshot(pictures: try flag("images", of: request.target))
    }

    /// The boolean parameter `name` of `target` (default false): `soft`, whether a purge marks
    /// copies expired instead of removing them; `images`, whether a snapshot holds the pictures.
    private static func flag(_ name: String, of target: RequestTarget) throws(Problem) -> Bool {
        guard let text = target.value(of: name) else { return false }
        guard let flag = RequestTarget.boolean(text) else {
            throw Problem(.invalidParameter, "\(name) must be true or false.", parameter: name)
        }
        return flag
    }
}
