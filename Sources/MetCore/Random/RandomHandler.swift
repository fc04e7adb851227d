import MetEngine

/// `/random`: a uniformly drawn object among the IDs the server knows for a filter. Holds the
/// generator and, for the ID lists that have repeats or come in several pages, their IDs without
/// repeats (made once, not per draw). One instance serves every loop; thread-safe.
final class RandomHandler: Sendable {
    /// The generation of the Met's search to draw a `q` from.
    let generations: SearchGenerations
    let presenter: Presenter
    let random: any RandomSource
    /// `--public-url`: makes the `Location` absolute.
    let publicURL: String?
    /// The IDs of the lists drawn from lately that had to be made anew (several pages, or
    /// repeats), without repeats, by the lists' keys and ETags.
    private let candidates = Locked<[String: [Int]]>([:])

    /// The most draws one request makes, those answered from memory included.
    static let maxDraws = 256
    /// The most draws one request makes whose record had to be fetched from the Met (each an
    /// upstream call, paced): a filter few records meet gives up after this many, with a 404,
    /// rather than keep the client waiting.
    static let maxFetchedDraws = 8
    /// The most lists whose repeat-free IDs are kept; past it, the table starts afresh.
    private static let maxKeptLists = 16

    init(generations: SearchGenerations, presenter: Presenter, random: any RandomSource, publicURL: String?) {
        self.generations = generations
        self.presenter = presenter
        self.random = random
        self.publicURL = publicURL
    }

    func pipeline(_ request: RandomRequest) -> RandomPipeline {
        RandomPipeline(request: request, handler: self)
    }

    /// The IDs of `lists`, in order, each once: what a draw picks from with equal chances. One
    /// list without repeats (`IDList.isUnique`, known since it was stored: the collection's half a
    /// million IDs among them) is used as it is; anything else is made once per set of lists (by
    /// their keys and ETags) and kept. Any thread, loops included.
    func candidates(in lists: [CacheEntry]) -> [Int] {
        let idLists = lists.compactMap { entry -> IDList? in
            if case .ids(let list) = entry.details { return list }
            return nil
        }
        if idLists.count == 1, idLists[0].isUnique { return idLists[0].ids }
        let key = lists.map { $0.key + " " + $0.etag }.joined(separator: "\n")
        if let kept = candidates.withLock({ $0[key] }) { return kept }
        var seen = Set<Int>()
        let ids = idLists.flatMap(\.ids).filter { seen.insert($0).inserted }
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
