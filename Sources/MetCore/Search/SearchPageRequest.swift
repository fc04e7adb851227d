import MetEngine

/// What a kept search page is filed under: everything its bytes depend on besides its entries (the
/// query, the generation its lists came from). The query includes `store`, so a page kept without
/// offering it to the store never makes a request that would offer it skip the offer.
struct SearchPageRequest: Hashable, Sendable {
    var query: SearchQuery
    var api: SearchAPI
}

/// Where bodies made from several entries are rendered and kept: search pages and widget timelines
/// (one cache, pages also kept per `SearchPageRequest`), batches, manifests (caches of their own).
typealias Renders = RenderCache<SearchPageRequest>
