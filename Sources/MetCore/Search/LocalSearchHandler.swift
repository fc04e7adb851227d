import MetEngine

/// `/search?source=local`: a search of the records this server holds, over the persistent tier's
/// index (`LocalSearch`), with the Met's filters, whole-result orders, deep paging and facets;
/// and `/search` when the Met cannot answer it (`--search-fallback local`). Read in a task (a few
/// milliseconds of SQLite), hydrated from the tier. Any thread.
///
/// The answer has `/search`'s shape with `source: "local"`, `indexed` (the records searched) and
/// `facets` when asked. It is `no-cache` with an ETag of its bytes: the index changes as the
/// cache fills, so a client revalidates (and gets a 304 while nothing changed). `Cache-Status`
/// says where it came from: `detail=local` when asked for, `detail=local-fallback` with the
/// status the Met's search failed with (`fwd-status`) when it stands in.
struct LocalSearchHandler: Sendable {
    let disk: (any PersistentTier)?
    /// `--search-fallback local`: a search of the Met that fails is answered from here.
    let fallback: Bool
    /// The latest results, which a first page replaces, as a search of the Met's does.
    let store: SharedStore
    /// Where answers are kept with their gzip copies.
    let renders: Renders
    let logger: Logger

    /// Whether a failed search of the Met is answered from the index.
    var fallsBack: Bool { fallback && disk != nil }

    /// Whether `response`, the answer to a search of the Met, says the Met could not answer (a
    /// 502, 503 or 504: unreachable, blocked, failing or slow), so that the index may stand in.
    static func metFailed(_ response: Response) -> Bool { (502...504).contains(response.status) }

    /// The answer to `query` (`source=local`): 404 `no_persistent_cache` without a tier.
    func answer(_ query: SearchQuery, _ presentation: Presentation) -> Answer {
        guard let disk else { return .ready(Self.noIndex.response) }
        return .suspended(
            Suspension { [self] in
                response(query, presentation, disk: disk, replacing: nil)
            })
    }

    /// What answers `query`, a search of the Met that failed with `failure`: the index's page, or
    /// `failure` itself when there is no index, it is empty, it cannot be read, or `q` has more
    /// words than local search takes. In a task.
    func standIn(for query: SearchQuery, _ presentation: Presentation, after failure: Response) -> Response {
        guard let disk, query.q.split(whereSeparator: \.isWhitespace).count <= LocalSearch.maxWords else {
            return failure
        }
        return response(query, presentation, disk: disk, replacing: failure)
    }

    private static let noIndex = Problem(
        .noPersistentCache,
        "This server keeps no persistent cache (--disk-cache-size 0, or its file could not be opened), "
            + "and so nothing to search: leave out source=local to search the Met.")

    private func response(
        _ query: SearchQuery, _ presentation: Presentation, disk: any PersistentTier, replacing failure: Response?
    ) -> Response {
        let page: LocalSearchPage?
        do {
            page = try disk.search(Self.search(for: query))
        } catch {
            logger.warning("local search: cannot read the index: \(error)")
            return failure ?? Problem(.internalError, "The local search index could not be read.").response
        }
        guard let page else { return failure ?? Self.noIndex.response }
        // An empty index has nothing to stand in with: the Met's failure says more.
        if let failure, page.indexed == 0 { return failure }
        var entries: [Int: CacheEntry] = [:]
        for id in page.ids {
            // Evicted since the index was read: listed as pending (asking again leaves it out).
            guard let entry = disk.entry(for: MetResource.object(id: id).cacheKey) else { continue }
            entries[id] = entry
        }
        let result = SearchResult(ids: page.ids, entries: entries, query: query, ordered: true)
        store.offer(result, from: query)
        // The next page from the same result (titles are ordered in SQL, at the index as it is); a
        // stand-in's next page asks the Met again.
        var pinned = query
        let titled = query.sort == .title || query.sort == .titleDescending
        pinned.indexVersion = query.source == .local && !titled ? page.version : nil
        let next = query.offset + query.limit < page.total ? pinned.url(offset: query.offset + query.limit) : nil
        let body = result.body(query: query, total: page.total, next: next, local: page)
        let link = next.map { "<\($0)>; rel=\"next\"" }
        let identity = ETag.strong(for: body)
        let rendered = renders.rendered("local|" + identity, gzip: true, link: link) { (body, identity) }
        let gzip = presentation.acceptsGzip && rendered.gzipped != nil
        let etag = gzip ? rendered.gzippedETag ?? rendered.etag : rendered.etag
        var fields: HTTPFields = [
            "Cache-Control": "no-cache", "ETag": etag,
            "Cache-Status": failure.map { "TheMet; fwd=uri-miss; fwd-status=\($0.status); detail=local-fallback" }
                ?? "TheMet; hit; detail=local",
        ]
        if rendered.gzipped != nil { fields.append("Vary", "Accept-Encoding") }
        if let link { fields.append("Link", link) }
        let outcome: CacheOutcome = failure == nil ? .hit : .stale
        if let ifNoneMatch = presentation.ifNoneMatch, ETag.ifNoneMatch(ifNoneMatch, matches: etag) {
            return Response(status: 304, headers: fields, cacheOutcome: outcome)
        }
        fields.append("Content-Type", Response.jsonContentType)
        if gzip { fields.append("Content-Encoding", "gzip") }
        return Response(
            status: 200, headers: fields, body: gzip ? rendered.gzipped ?? rendered.body : rendered.body,
            cacheOutcome: outcome)
    }

    /// `query` as a search of the index. Words are `q` split at white space; `title`, `tags` and
    /// `artistOrCulture` narrow them to those columns; `hasImages=true` (the default) keeps records
    /// with an image URL, `false` every record; a `departmentId` the Met does not list is ignored,
    /// as the Met ignores it.
    static func search(for query: SearchQuery) -> LocalSearch {
        var search = LocalSearch()
        search.words = query.q.split(whereSeparator: \.isWhitespace).map(String.init)
        var columns: [String] = []
        func value(_ name: String) -> String? { query.filters.first { $0.name == name }?.value }
        func flag(_ name: String) -> Bool? { value(name).map { $0 == "true" } }
        if flag("title") == true { columns.append("title") }
        if flag("tags") == true { columns.append("tags") }
        if flag("artistOrCulture") == true { columns.append("artist") }
        search.columns = columns.isEmpty ? nil : columns
        search.isHighlight = flag("isHighlight")
        search.isOnView = flag("isOnView")
        search.hasImage = flag("hasImages") == true ? true : nil
        search.isPublicDomain = flag("isPublicDomain")
        search.departments = value("departmentId").flatMap { Int($0) }.flatMap(MetDepartments.names(of:))
        search.mediumTerms = value("medium").map { $0.split(separator: "|").map(String.init) }
        search.placeTerms = value("geoLocation").map { $0.split(separator: "|").map(String.init) }
        search.dateBegin = value("dateBegin").flatMap { Int($0) }
        search.dateEnd = value("dateEnd").flatMap { Int($0) }
        search.order =
            switch query.sort {
            case .relevance: .relevance
            case .id: .id
            case .idDescending: .idDescending
            case .title: .title
            case .titleDescending: .titleDescending
            case .date: .date
            case .dateDescending: .dateDescending
            }
        (search.offset, search.limit, search.facets) = (query.offset, query.limit, query.facets)
        search.version = query.indexVersion
        return search
    }
}
