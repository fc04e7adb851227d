import MetEngine

/// Which upstream search answers a `/search` page needs, and how its IDs are read out of them.
///
/// v1 answers with every ID at once. v1.1 is read in aligned pages of 500 (its largest), each
/// cached on its own, so neighbouring `/search` pages share upstream calls; sorting by ID needs
/// the whole list, which on v1.1 means every page up to the 10,000-hit window.
struct SearchWindow {
    let query: SearchQuery
    let api: SearchAPI

    /// The resources to read first (for v1.1 whole-list sorts, only the first page: it tells the total).
    func firstResources() -> [MetResource] {
        switch api {
        case .v1:
            return [.search(.v1, filters: query.filters, q: query.q)]
        case .v1_1:
            if query.sort.sortsWholeList { return [chunk(0)] }
            let end = min(query.offset + query.limit, SearchAPI.window)
            guard query.offset < end else { return [chunk(0)] }
            let first = query.offset / SearchAPI.pageLimit
            let last = (end - 1) / SearchAPI.pageLimit
            return (first...last).map(chunk)
        }
    }

    /// Every upstream answer any page of this query can read, whatever its offset, limit or sort:
    /// v1's one list, or every v1.1 page of the window (what a purge of the search removes).
    func everyResource() -> [MetResource] {
        switch api {
        case .v1: return firstResources()
        case .v1_1: return (0..<(SearchAPI.window / SearchAPI.pageLimit)).map(chunk)
        }
    }

    /// The resources still needed once the total is known (v1.1 whole-list sorts only).
    func remainingResources(total: Int) -> [MetResource] {
        guard api == .v1_1, query.sort.sortsWholeList else { return [] }
        let reachable = min(total, SearchAPI.window)
        let pages = (reachable + SearchAPI.pageLimit - 1) / SearchAPI.pageLimit
        return pages > 1 ? (1..<pages).map(chunk) : []
    }

    /// The page's IDs (in order, without repeats), the Met's total, and how many hits can be
    /// paged at all, from the ID lists of every resource this window named.
    func page(from lists: [MetResource: IDList]) -> (ids: [Int], total: Int, reachable: Int) {
        let resources = firstResources() + remainingResources(total: lists.values.first?.total ?? 0)
        let total = resources.compactMap { lists[$0]?.total }.first ?? 0
        let reachable: Int
        var ids: [Int]
        switch api {
        case .v1:
            ids = lists[resources[0]]?.ids ?? []
            reachable = ids.count
        case .v1_1:
            reachable = min(total, SearchAPI.window)
            if query.sort.sortsWholeList {
                ids = resources.flatMap { lists[$0]?.ids ?? [] }
            } else {
                // Positions [offset, offset + limit) of the whole list, read from the aligned pages.
                let base = (resources.first.map { Self.offset(of: $0) }) ?? 0
                let joined = resources.flatMap { lists[$0]?.ids ?? [] }
                let start = min(max(0, query.offset - base), joined.count)
                let end = min(start + query.limit, joined.count, max(0, reachable - base))
                return (Self.unique(Array(joined[start..<max(start, end)])), total, reachable)
            }
        }
        switch query.sort {
        case .id: ids = Self.unique(ids).sorted()
        case .idDescending: ids = Self.unique(ids).sorted(by: >)
        default: break
        }
        // A whole-list sort pages the list without its repeats: only that many hits can be paged
        // (else `next` would point past the end).
        let pageable = query.sort.sortsWholeList ? min(reachable, ids.count) : reachable
        let start = min(query.offset, ids.count, pageable)
        let end = min(start + query.limit, ids.count, pageable)
        return (Self.unique(Array(ids[start..<end])), total, pageable)
    }

    /// The v1.1 page of 500 hits with index `index`.
    private func chunk(_ index: Int) -> MetResource {
        .search(
            .v1_1, filters: query.filters, q: query.q,
            page: (offset: index * SearchAPI.pageLimit, limit: SearchAPI.pageLimit))
    }

    private static func offset(of resource: MetResource) -> Int {
        guard case .search(_, let items) = resource else { return 0 }
        return items.first { $0.name == "offset" }.flatMap { Int($0.value) } ?? 0
    }

    /// `ids` without repeats, first occurrence kept.
    private static func unique(_ ids: [Int]) -> [Int] {
        var seen = Set<Int>()
        return ids.filter { seen.insert($0).inserted }
    }
}
