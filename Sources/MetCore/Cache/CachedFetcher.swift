/// The tier below memory today: asks the upstream once for all concurrent requests of a key
/// (single flight), stores the answer in the memory tier, and stands in an expired entry when the
/// upstream fails (stale-if-error). Counts each outcome. One instance serves every loop.
final class CachedFetcher: EntryResolver {
    /// Upstream fetches in progress; internal so tests and `/health` can see them.
    let flights = SingleFlight<Fill>()
    private let client: MetClient
    private let cache: MemoryCache
    private let time: any TimeSource
    private let freshness: FreshnessPolicy
    private let compress: (@Sendable ([UInt8]) -> [UInt8])?

    /// - Parameters:
    ///   - freshness: the lifetimes of the entries it stores.
    ///   - compress: gzip, to keep a compressed copy of each entry; nil keeps identity bodies only.
    init(
        client: MetClient, cache: MemoryCache, time: any TimeSource, freshness: FreshnessPolicy,
        compress: (@Sendable ([UInt8]) -> [UInt8])?
    ) {
        self.client = client
        self.cache = cache
        self.time = time
        self.freshness = freshness
        self.compress = compress
    }

    func resolve(_ resource: MetResource, cached: CacheEntry?) async -> Resolution {
        let key = resource.cacheKey
        let (result, joined) = await flights.run(key) { [client, cache, time, freshness, compress] in
            // A flight for this key may have stored its entry between the driver's lookup on the
            // loop and this flight's start: then there is nothing to ask the upstream.
            if let stored = cache.entry(for: key), stored.isFresh(at: time.now()) {
                return .success(Fill(entry: stored, fetched: false))
            }
            return await client.fetch(resource).map { answer in
                let entry = CacheEntry(
                    key: key, kind: resource.kind, status: answer.status, body: answer.body, storedAt: time.now(),
                    policy: freshness, message: answer.message, details: answer.details, compress: compress)
                cache.store(entry)
                return Fill(entry: entry, fetched: true)
            }
        }
        // Only this request's own cancellation (its client left) ends here; the answer goes nowhere.
        if case .failure(.cancelled) = result { return .cancelled }
        switch result {
        case .success(let fill):
            // Joining a fetch, or finding the entry another one stored, is a collapsed request.
            let outcome: CacheOutcome = joined || !fill.fetched ? .collapsed : .miss
            cache.count(outcome)
            return .entry(fill.entry, outcome)
        case .failure(let error):
            cache.count(joined ? .collapsed : .miss)
            // Another request may have stored an entry since the driver looked.
            if let stale = cached ?? cache.entry(for: key), stale.isUsableWhenStale(at: time.now()) {
                cache.count(.stale)
                return .entry(stale, .stale)
            }
            return .failed(error)
        }
    }
}

/// What a flight brought: the entry, and whether the upstream was asked for it.
struct Fill: Sendable {
    let entry: CacheEntry
    let fetched: Bool
}
