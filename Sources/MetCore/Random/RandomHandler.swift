/// `/random`: a uniformly drawn object among the IDs the server knows for a filter. Holds the
/// generator and, per ID list, its IDs without repeats (made once per list, not per draw). One
/// instance serves every loop; thread-safe.
final class RandomHandler: Sendable {
    /// The generation of the Met's search to draw a `q` from, and the presenter.
    let search: SearchHandler
    let random: any RandomSource
    /// `--public-url`: makes the `Location` absolute.
    let publicURL: String?
    /// The IDs of each list drawn from lately, without repeats, by the lists' keys and ETags.
    private let candidates = Locked<[String: [Int]]>([:])

    /// The most draws one request makes, those answered from memory included.
    static let maxDraws = 256
    /// The most draws one request makes whose record memory did not hold (each may cost an
    /// upstream call, paced): a filter few records meet gives up after this many, with a 404,
    /// rather than keep the client waiting.
    static let maxFetchedDraws = 8
    /// The most lists whose repeat-free IDs are kept; past it, the table starts afresh.
    private static let maxKeptLists = 16

    init(search: SearchHandler, random: any RandomSource, publicURL: String?) {
        self.search = search
        self.random = random
        self.publicURL = publicURL
    }

    func pipeline(_ request: RandomRequest) -> RandomPipeline {
        RandomPipeline(request: request, handler: self, api: search.currentGeneration)
    }

    /// The IDs of `lists`, in order, each once: what a draw picks from with equal chances.
    /// Computed once per set of lists (by their keys and ETags) and kept; any thread.
    func candidates(in lists: [CacheEntry]) -> [Int] {
        let key = lists.map { $0.key + " " + $0.etag }.joined(separator: "\n")
        if let kept = candidates.withLock({ $0[key] }) { return kept }
        var ids: [Int] = []
        for entry in lists {
            if case .ids(let list) = entry.details { ids += list.ids }
        }
        var seen = Set<Int>(minimumCapacity: ids.count)
        if !ids.allSatisfy({ seen.insert($0).inserted }) {
            seen.removeAll(keepingCapacity: true)
            ids = ids.filter { seen.insert($0).inserted }
        }
        candidates.withLock { table in
            if table.count >= Self.maxKeptLists { table.removeAll() }
            table[key] = ids
        }
        return ids
    }

    /// The answer for a drawn record: a 302 to `/objects/{id}` (no-store: the next draw differs),
    /// or with `asJSON` a 200 `{objectID, location, drawnFrom, object}`.
    func response(for entry: CacheEntry, id: Int, drawnFrom count: Int, asJSON: Bool) -> Response {
        let location = (publicURL ?? "") + "/objects/\(id)"
        guard asJSON else {
            return Response(status: 302, headers: ["Location": location, "Cache-Control": "no-store"])
        }
        var json = JSONWriter(capacity: entry.body.count + 128)
        json.beginObject()
        json.member("objectID", int: id)
        json.member("location", string: location)
        json.member("drawnFrom", int: count)
        json.key("object")
        json.raw(entry.body)
        json.endObject()
        return Response(
            status: 200, headers: ["Content-Type": Response.jsonContentType, "Cache-Control": "no-store"],
            body: json.bytes, cacheOutcome: .none)
    }
}
