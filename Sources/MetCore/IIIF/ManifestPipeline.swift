import HTTPGrammar
import MetEngine

/// `/iiif/{id}/manifest.json`: the object's record through the cache, then its IIIF manifest
/// (`IIIFManifest`), rendered once per record and base and kept like a search page. Objects that
/// are not in the public domain, or have no image, are a 404 saying so.
struct ManifestPipeline: Pipeline {
    let id: Int
    /// The base URL every `id` in the manifest starts with (see `base(publicURL:scheme:host:)`).
    let base: String
    let presentation: Presentation
    let presenter: Presenter
    let renders: Renders

    mutating func advance(_ resolutions: [Resolution], at now: Double) -> Step {
        let resource = MetResource.object(id: id)
        guard let resolution = resolutions.first else { return .need(Need([resource])) }
        guard case .entry(let entry, let outcome) = resolution else {
            return .respond(presenter.failure(resolution, of: resource))
        }
        if let refusal = Self.refusal(of: entry, id: id) { return .respond(refusal) }
        let (id, base) = (id, base)
        return .respond(
            presenter.composite(
                key: "iiif \(IIIFManifest.format)|\(base)|\(entry.etag)", complete: true, bounds: [entry],
                outcome: outcome, renders: renders,
                presentation, at: now, contentType: IIIFManifest.contentType
            ) { IIIFManifest(record: IIIFRecord.read(entry.body), id: id, base: base).body }.response)
    }

    /// The problem that answers for object `id` when `entry`, its record, cannot be shown through
    /// IIIF (the Met has no such object, it is not in the public domain, it has no image); nil when
    /// it can. The manifest and the Image API (`IIIFImageHandler`) answer alike.
    static func refusal(of entry: CacheEntry, id: Int) -> Response? {
        guard entry.status == 200, let summary = entry.summary else {
            return Problem(.objectNotFound, "The Met has no object \(id): \(entry.message ?? "not found").").response
        }
        guard summary.isPublicDomain == true else {
            return Problem(
                .notPublicDomain,
                "Object \(id) is not in the public domain: the Met publishes no images of it, so a IIIF viewer "
                    + "would have nothing to show. /open/\(id) leads to its page on the Met's website."
            ).response
        }
        let primary = [summary.primaryImage, summary.primaryImageSmall].compactMap { $0 }.first { !$0.isEmpty }
        guard primary.flatMap(MetWebPage.normalized) != nil else {
            return Problem(.noImages, "The Met's record of object \(id) has no image to show in a IIIF viewer.")
                .response
        }
        return nil
    }

    /// The base URL of the manifest's `id`s: `--public-url` when set, else `scheme` (`http`, or
    /// `https` when a trusted proxy says the client used it) and the request's `Host` when it is a
    /// plain authority (letters, digits, `-._~`, `:` and the brackets of an IPv6 literal, at most
    /// 255 bytes), else `localhost`. The host comes from the client, so it is checked byte by byte
    /// before it goes into the body; the render is kept per base.
    static func base(publicURL: String?, scheme: String, host: String?) -> String {
        if let publicURL { return publicURL }
        guard let host, (1...255).contains(host.utf8.count),
            host.utf8.allSatisfy({
                Grammar.isUnreserved($0) || $0 == UInt8(ascii: ":") || $0 == UInt8(ascii: "[")
                    || $0 == UInt8(ascii: "]")
            })
        else { return scheme + "://localhost" }
        return scheme + "://" + host
    }
}
