import MetEngine

/// Local searches already worked out, by their search (paging aside) and the index's version
/// (`search_version`): every match's ID in order, the total and the facets. Paging through a
/// result, or asking the same search again, reads a slice here instead of matching the words and
/// scoring and counting them again (a common word is thousands of matches).
/// Results of older versions stay while there is room: a client paging through one asks for its
/// version (`LocalSearch.version`), so its pages stay of one result while the cache fills. Bounded
/// by a cost (the IDs kept, and for each result a share for its key and facets, so that results
/// of nothing still count) and a number of results; the results kept longest go first. Any thread.
final class SearchResultCache: Sendable {
    struct Result: Sendable {
        var ids: [Int]
        var facets: [SearchFacet: FacetCounts]
        var indexed: Int
    }

    private struct Key: Hashable {
        var search: LocalSearch
        var version: Int64
    }

    private struct State {
        var results: [Key: Result] = [:]
        /// Keys, oldest first.
        var order: [Key] = []
        /// The cost of what is kept (`cost(of:)`).
        var cost = 0
    }

    /// The most IDs kept in all (8 bytes each), less what the results' keys and facets count for.
    static let maxIDs = 2_000_000
    /// The most results kept.
    static let maxResults = 4_096

    private let state = Locked(State())

    /// The result of `search` (its offset and limit aside) at `version`, if kept.
    func result(of search: LocalSearch, at version: Int64) -> Result? {
        state.withLock { $0.results[Key(search: Self.whole(search), version: version)] }
    }

    /// Keeps `result`, the result of `search` at `version`.
    func keep(_ result: Result, of search: LocalSearch, at version: Int64) {
        let key = Key(search: Self.whole(search), version: version)
        let cost = Self.cost(of: result, key)
        guard cost <= Self.maxIDs / 4 else { return }
        state.withLock { state in
            guard state.results[key] == nil else { return }
            while state.cost + cost > Self.maxIDs || state.results.count >= Self.maxResults, !state.order.isEmpty {
                let oldest = state.order.removeFirst()
                state.cost -= state.results.removeValue(forKey: oldest).map { Self.cost(of: $0, oldest) } ?? 0
            }
            state.results[key] = result
            state.order.append(key)
            state.cost += cost
        }
    }

    /// What a result counts for, in IDs: its IDs, its facets' values, and its key's words (at
    /// least 64 in all: a result of nothing still takes room).
    private static func cost(of result: Result, _ key: Key) -> Int {
        let words = key.search.words.reduce(0) { $0 + $1.utf8.count } / 8
        let facets = result.facets.values.reduce(0) { $0 + $1.values.count * 4 }
        return 64 + result.ids.count + facets + words
    }

    private static func whole(_ search: LocalSearch) -> LocalSearch {
        var whole = search
        (whole.offset, whole.limit, whole.version) = (0, 0, nil)
        return whole
    }
}
