import MetEngine

/// A hydrated `/search` page: what happened to every ID of the page, ready to render.
struct SearchResult {
    /// The records to send, in their final order.
    var objects: [CacheEntry] = []
    /// IDs the Met answered 404 for (either message).
    var missing: [Int] = []
    /// IDs dropped because `hasImages` is true but the record has no image URL.
    var withoutImage: [Int] = []
    /// IDs not fetched before the deadline (or whose fetch failed): ask again.
    var pending: [Int] = []

    /// Sorts `ids` into the lists, given the entries found for them (absent = pending), then
    /// orders the objects for `sort` (title and date sorts apply within the page) unless `ordered`
    /// (a local search's page, already in the order of the whole result).
    init(ids: [Int], entries: [Int: CacheEntry], query: SearchQuery, ordered: Bool = false) {
        for id in ids {
            guard let entry = entries[id] else {
                pending.append(id)
                continue
            }
            if entry.status == 404 {
                missing.append(id)
            } else if query.requiresImages, case .object(let summary) = entry.details, !summary.hasImage {
                withoutImage.append(id)
            } else {
                objects.append(entry)
            }
        }
        switch ordered ? .relevance : query.sort {
        case .title: objects.sort { Self.title($0) < Self.title($1) }
        case .titleDescending: objects.sort { Self.title($0) > Self.title($1) }
        case .date: objects.sort { Self.dates($0) < Self.dates($1) }
        case .dateDescending: objects.sort { Self.dates($0) > Self.dates($1) }
        case .relevance, .id, .idDescending: break
        }
    }

    /// The response body: `query`, `source`, `total`, `offset`, `limit`, `sort`, `objects`
    /// (records byte for byte, or their projection), `missing`, `withoutImage`, `pending`, `next`;
    /// for a `local` page also `indexed` and, when asked for, `facets`.
    func body(query: SearchQuery, total: Int, next: String?, local: LocalSearchPage? = nil) -> [UInt8] {
        var json = JSONWriter(capacity: objects.reduce(1_024) { $0 + $1.body.count })
        json.beginObject()
        json.key("query")
        query.writeEcho(to: &json)
        json.member("source", string: local == nil ? "met" : "local")
        json.member("total", int: total)
        json.member("offset", int: query.offset)
        json.member("limit", int: query.limit)
        json.member("sort", string: query.sort.rawValue)
        json.records("objects", objects, fields: query.fields)
        json.ids("missing", missing)
        json.ids("withoutImage", withoutImage)
        json.ids("pending", pending)
        json.key("next")
        if let next { json.string(next) } else { json.null() }
        if let local {
            json.member("indexed", int: local.indexed)
            if !query.facets.isEmpty { local.writeFacets(query.facets, to: &json) }
        }
        json.endObject()
        return json.bytes
    }

    /// What the body `body(query:total:next:)` renders is a function of, spelled out: the query
    /// by its canonical URL, and the ID lists and records by their strong ETags, with the IDs of
    /// each list. The page's ETag is its hash (no need to hash the body), and rendered pages are
    /// kept under it whole (`RenderCache`), so two pages share a render only if all of it is equal.
    func renderKey(query: SearchQuery, lists: [CacheEntry]) -> String {
        var parts = query.url(offset: query.offset) + "|" + query.filters.map(\.value).joined(separator: ",")
        for entry in lists { parts += "|" + entry.etag }
        for entry in objects { parts += "|" + entry.etag }
        for (name, ids) in [("m", missing), ("w", withoutImage), ("p", pending)] {
            parts += "|\(name)" + ids.map(String.init).joined(separator: ",")
        }
        return parts
    }

    private static func title(_ entry: CacheEntry) -> String {
        guard case .object(let summary) = entry.details else { return "" }
        return (summary.title ?? "").lowercased()
    }

    /// `objectBeginDate`, then `objectEndDate`; records without dates sort last (ascending).
    private static func dates(_ entry: CacheEntry) -> (Int, Int) {
        guard case .object(let summary) = entry.details else { return (Int.max, Int.max) }
        return (summary.objectBeginDate ?? Int.max, summary.objectEndDate ?? Int.max)
    }
}
