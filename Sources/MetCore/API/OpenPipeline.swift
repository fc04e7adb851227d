import MetEngine

/// `/open/{id}` and `/open?url=themet://{id}`: the object's record through the cache, then a 302
/// to where its deep link leads (or, with `format=json`, that place as JSON).
struct OpenPipeline: Pipeline {
    let id: Int
    let asJSON: Bool
    /// `--detail-url`: where public-domain objects' deep links lead.
    let detailURL: String
    let presenter: Presenter

    mutating func advance(_ resolutions: [Resolution], at now: Double) -> Step {
        let resource = MetResource.object(id: id)
        guard let resolution = resolutions.first else { return .need(Need([resource])) }
        guard let entry = resolution.entry else { return .respond(presenter.failure(resolution, of: resource)) }
        return .respond(response(for: entry))
    }

    /// A 302 to the detail view (public domain) or the Met's page (the rest), or with `asJSON`
    /// a 200 `{objectID, isPublicDomain, target, location}`; a 404 problem for a Met 404.
    private func response(for entry: CacheEntry) -> Response {
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
}
