import MetEngine

/// Local searches already worked out, by their search (paging aside) and the index's version
/// (`search_version`): every match's ID in order, the total and the facets. Paging through a
/// result, or asking the same search again, reads a slice here instead of matching the words and
/// counting the facets again (a common word is thousands of matches, each with a bm25 score).
/// Results of older versions stay while there is room: a client paging through one asks for its
/// version (`LocalSearch.version`), so its pages stay of one result while the cache fills. Bounded
/// by the IDs kept; the results kept longest go first. Any thread.
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
        var ids = 0
    }

    /// The most IDs kept in all (8 bytes each).
    static let maxIDs = 2_000_000

    private let state = Locked(State())

    /// The result of `search` (its offset and limit aside) at `version`, if kept.
    func result(of search: LocalSearch, at version: Int64) -> Result? {
        state.withLock { $0.results[Key(search: Self.whole(search), version: version)] }
    }

    /// Keeps `result`, the result of `search` at `version`.
    func keep(_ result: Result, of search: LocalSearch, at version: Int64) {
        guard result.ids.count <= Self.maxIDs / 4 else { return }
        state.withLock { state in
            let key = Key(search: Self.whole(search), version: version)
            guard state.results[key] == nil else { return }
            while state.ids + result.ids.count > Self.maxIDs, !state.order.isEmpty {
                let oldest = state.order.removeFirst()
                state.ids -= state.results.removeValue(forKey: oldest)?.ids.count ?? 0
            }
            state.results[key] = result
            state.order.append(key)
            state.ids += result.ids.count
        }
    }

    private static func whole(_ search: LocalSearch) -> LocalSearch {
        var whole = search
        (whole.offset, whole.limit, whole.version) = (0, 0, nil)
        return whole
    }
}
