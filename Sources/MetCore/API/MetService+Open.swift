extension MetService {
    /// Where object `id`'s deep link leads, from a fresh cache entry; nil when the record needs
    /// the upstream.
    func openImmediately(_ id: Int, asJSON: Bool) -> Response? {
        freshEntry(for: .object(id: id), at: time.now()).map { openResponse($0, id: id, asJSON: asJSON) }
    }

    /// Where object `id`'s deep link leads: the record through the cache, then a 302 (or JSON).
    func open(_ id: Int, asJSON: Bool) async -> Response {
        switch await resolve(.object(id: id)) {
        case .entry(let entry, _): openResponse(entry, id: id, asJSON: asJSON)
        case .failed(let error): problem(for: error, resource: .object(id: id)).response
        case .cancelled: Response(status: 499)
        }
    }

    /// A 302 to the detail view (public domain) or the Met's page (the rest), or with `asJSON`
    /// a 200 `{objectID, isPublicDomain, target, location}`; a 404 problem for a Met 404.
    private func openResponse(_ entry: CacheEntry, id: Int, asJSON: Bool) -> Response {
        guard entry.status == 200 else {
            return Problem(.objectNotFound, "The Met has no object \(id): \(entry.message ?? "not found").").response
        }
        let isPublicDomain = entry.summary?.isPublicDomain ?? false
        let target = DeepLink.target(
            id: id, isPublicDomain: isPublicDomain, objectURL: entry.summary?.objectURL, detailTemplate: detailURL)
        if asJSON {
            var json = JSONWriter()
            json.beginObject()
            json.member("objectID", int: id)
            json.member("isPublicDomain", bool: isPublicDomain)
            json.member("target", string: target.kind)
            json.member("location", string: target.location)
            json.endObject()
            return Response(
                status: 200, headers: ["Content-Type": Response.jsonContentType, "Cache-Control": "no-cache"],
                body: json.bytes)
        }
        return Response(status: 302, headers: ["Location": target.location, "Cache-Control": "no-cache"])
    }

    /// `format`: absent (a redirect) or `json`; other parameters than `allowed` are refused.
    static func openFormat(_ target: RequestTarget, allowing allowed: Set<String>) throws(Problem) -> Bool {
        try allowOnly(allowed, in: target)
        for name in allowed where target.query.filter({ $0.name == name }).count > 1 {
            throw Problem(.invalidParameter, "\(name) is given more than once.", parameter: name)
        }
        guard let format = target.value(of: "format") else { return false }
        guard format == "json" else {
            throw Problem(.invalidParameter, "format must be json (or absent, for a redirect).", parameter: "format")
        }
        return true
    }
}
