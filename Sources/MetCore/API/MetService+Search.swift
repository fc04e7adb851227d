extension MetService {
    /// A hydrated search page with what the response needs besides the objects.
    struct HydratedPage {
        var result: SearchResult
        var page: (ids: [Int], total: Int, reachable: Int)
        /// The ID-list entries the page came from (their freshness bounds the response's).
        var lists: [CacheEntry]
        var outcome: CacheOutcome
    }

    /// A `/search` page answered from fresh cache entries alone, on the calling (loop) thread; nil
    /// when the ID list or any object of the page needs the upstream.
    func searchImmediately(_ query: SearchQuery, _ presentation: Presentation) -> Response? {
        hydratedPageImmediately(query).map { searchResponse($0, query: query, presentation, at: time.now()) }
    }

    /// A `/search` page: the ID list from the cache or the upstream (v1.1 or v1, falling back
    /// between them in `auto` mode), then every object of the page through the shared cache.
    func search(_ query: SearchQuery, _ presentation: Presentation) async -> Response {
        switch await hydratedPage(query) {
        case .success(let page): searchResponse(page, query: query, presentation, at: time.now())
        case .failure(let error): error.response
        }
    }

    /// The page from fresh cache entries alone, or nil; see `searchImmediately`. Loop thread safe.
    func hydratedPageImmediately(_ query: SearchQuery) -> HydratedPage? {
        let now = time.now()
        let window = SearchWindow(query: query, api: searchGeneration.withLock { $0 })
        var lists: [MetResource: IDList] = [:]
        var listEntries: [CacheEntry] = []
        func read(_ resources: [MetResource]) -> Bool {
            for resource in resources {
                guard let entry = freshEntry(for: resource, at: now), case .ids(let list) = entry.details else {
                    return false
                }
                lists[resource] = list
                listEntries.append(entry)
            }
            return true
        }
        guard read(window.firstResources()) else { return nil }
        guard read(window.remainingResources(total: lists.values.first?.total ?? 0)) else { return nil }
        let page = window.page(from: lists)
        var entries: [Int: CacheEntry] = [:]
        for id in page.ids {
            guard let entry = freshEntry(for: .object(id: id), at: now) else { return nil }
            entries[id] = entry
        }
        for _ in 0..<(listEntries.count + entries.count) { cache.count(.hit) }
        let result = SearchResult(ids: page.ids, entries: entries, query: query)
        offerToStore(result, query)
        return HydratedPage(result: result, page: page, lists: listEntries, outcome: .hit)
    }

    /// The hydrated page for `query`, or the error response: the ID list from the cache or the upstream (v1.1 or v1, falling back
    /// between them in `auto` mode), then every object of the page through the shared cache.
    /// Objects not cached are fetched in the background under the pacer; the answer waits for
    /// them until `query.wait` and lists the rest as `pending`, while their fetches go on and fill
    /// the cache for the next identical request.
    func hydratedPage(_ query: SearchQuery) async -> Result<HydratedPage, ResponseError> {
        var api = searchGeneration.withLock { $0 }
        var lists: [MetResource: IDList] = [:]
        var listEntries: [CacheEntry] = []
        var outcome = CacheOutcome.hit
        var failure: (UpstreamError, MetResource)?
        for _ in 0..<2 {
            let window = SearchWindow(query: query, api: api)
            lists = [:]
            listEntries = []
            failure = nil
            for phase in 0..<2 {
                let resources =
                    phase == 0
                    ? window.firstResources() : window.remainingResources(total: lists.values.first?.total ?? 0)
                for resource in resources {
                    switch await resolve(resource) {
                    case .entry(let entry, let how):
                        guard case .ids(let list) = entry.details else {
                            failure = (.malformed("search answer without an ID list"), resource)
                            break
                        }
                        lists[resource] = list
                        listEntries.append(entry)
                        outcome = Self.combine(outcome, how)
                    case .failed(let error):
                        failure = (error, resource)
                    case .cancelled:
                        return .failure(ResponseError(Response(status: 499)))
                    }
                    if failure != nil { break }
                }
                if failure != nil { break }
            }
            guard let (error, _) = failure, let other = switchedGeneration(from: api, after: error) else { break }
            api = other
        }
        if let (error, resource) = failure {
            return .failure(ResponseError(problem(for: error, resource: resource).response))
        }

        let page = SearchWindow(query: query, api: api).page(from: lists)
        let now = time.now()
        var entries: [Int: CacheEntry] = [:]
        var missing: [Int] = []
        for id in page.ids {
            if let entry = freshEntry(for: .object(id: id), at: now) {
                cache.count(.hit)
                entries[id] = entry
            } else {
                missing.append(id)
            }
        }
        if !missing.isEmpty {
            outcome = Self.combine(outcome, .miss)
            let fetched = await hydrate(missing, until: now + query.wait)
            entries.merge(fetched) { first, _ in first }
        }
        let result = SearchResult(ids: page.ids, entries: entries, query: query)
        offerToStore(result, query)
        return .success(HydratedPage(result: result, page: page, lists: listEntries, outcome: outcome))
    }

    /// Offers a page with objects to the shared store when the request may replace it (see
    /// `SearchQuery.replacesStore`); the store decides whether it is new. Cheap, on any thread:
    /// the file is written off the loops and the cooperative pool.
    private func offerToStore(_ result: SearchResult, _ query: SearchQuery) {
        guard query.replacesStore, !result.objects.isEmpty else { return }
        store.offer(result.objects, from: query.storeSource)
    }

    /// Starts a background fetch for each of `ids` (joining any already running), and waits for
    /// them until `deadline`. Returns the entries that arrived (objects and Met 404s).
    private func hydrate(_ ids: [Int], until deadline: Double) async -> [Int: CacheEntry] {
        let admitted = backgroundFills.withLock { running -> Int in
            let room = max(0, Self.maxBackgroundFills - running)
            let count = min(room, ids.count)
            running += count
            return count
        }
        if admitted < ids.count {
            logger.warning("search: \(ids.count - admitted) object(s) left pending: too many background fetches")
        }
        let collector = HydrationCollector(expected: admitted)
        for id in ids.prefix(admitted) {
            // Unstructured on purpose: the fetch must outlive this request (its deadline, or its
            // client leaving) so that the cache fills for the next identical search.
            Task {
                let resolution = await self.resolve(.object(id: id))
                self.backgroundFills.withLock { $0 -= 1 }
                if case .entry(let entry, _) = resolution {
                    collector.deliver(id, entry)
                } else {
                    collector.deliver(id, nil)
                }
            }
        }
        if admitted > 0 { await collector.wait(until: deadline, time: time) }
        return collector.results
    }

    /// In `auto` mode, the other generation to try after `error` on `api`: v1 when v1.1 is
    /// absent (404), v1.1 when v1 is retired (410). Remembers the switch for later searches.
    private func switchedGeneration(from api: SearchAPI, after error: UpstreamError) -> SearchAPI? {
        guard searchMode == .auto else { return nil }
        let other: SearchAPI
        switch (api, error) {
        case (.v1_1, .status(404)): other = .v1
        case (.v1, .status(410)): other = .v1_1
        default: return nil
        }
        searchGeneration.withLock { $0 = other }
        logger.warning("search: \(api.path) answered \(error.logDescription); using \(other.path) from now on")
        return other
    }

    /// The HTTP response for a hydrated page: JSON body with its own ETag (derived from its
    /// parts' ETags, so a 304 renders nothing); cacheable for as long as the ID list stays fresh,
    /// unless something is still pending.
    private func searchResponse(
        _ hydrated: HydratedPage, query: SearchQuery, _ presentation: Presentation, at now: Double
    ) -> Response {
        let (result, page, lists, outcome) = (hydrated.result, hydrated.page, hydrated.lists, hydrated.outcome)
        let next = query.offset + query.limit < page.reachable ? query.url(offset: query.offset + query.limit) : nil
        let etag = result.etag(query: query, lists: lists)
        let freshUntil = lists.map(\.freshUntil).min() ?? now
        let storedAt = lists.map(\.storedAt).min() ?? now
        let remaining = max(0, Int((freshUntil - now).rounded(.down)))
        var headers = HTTPFields()
        headers.append("Cache-Control", result.pending.isEmpty ? "public, max-age=\(remaining)" : "no-store")
        headers.append("Age", String(max(0, Int((now - storedAt).rounded(.down)))))
        headers.append("Cache-Status", Self.cacheStatus(outcome, ttl: remaining))
        headers.append("ETag", etag)
        if let ifNoneMatch = presentation.ifNoneMatch, ETag.ifNoneMatch(ifNoneMatch, matches: etag) {
            return Response(status: 304, headers: headers, cacheOutcome: outcome)
        }
        headers.append("Content-Type", Response.jsonContentType)
        let body = result.body(query: query, total: page.total, next: next)
        return Response(status: 200, headers: headers, body: body, cacheOutcome: outcome)
    }

    /// The outcome shown for a response built from several entries: the least cached one wins.
    private static func combine(_ first: CacheOutcome, _ second: CacheOutcome) -> CacheOutcome {
        let rank: [CacheOutcome: Int] = [.none: 0, .hit: 1, .collapsed: 2, .miss: 3, .stale: 4]
        return (rank[second] ?? 0) > (rank[first] ?? 0) ? second : first
    }

    /// The Met-compatible search: the Met's parameters (unknown ones dropped, as the Met ignores
    /// them) in canonical order, through the cache; the body goes out byte for byte.
    static func mirrorSearchResource(_ api: SearchAPI, _ target: RequestTarget) -> MetResource {
        var known = SearchQuery.booleanFilters.union(SearchQuery.termFilters).union([
            "departmentId", "dateBegin", "dateEnd",
        ])
        if api == .v1_1 { known.formUnion(["offset", "limit"]) }
        var seen = Set<String>()
        let items = target.query.reversed().filter { known.contains($0.name) && seen.insert($0.name).inserted }
        return .search(api, filters: items, q: target.value(of: "q"))
    }
}

extension CacheEntry {
    /// The object ID of an object entry, from its summary.
    var objectID: Int? {
        if case .object(let summary) = details { return summary.objectID }
        return nil
    }
}
