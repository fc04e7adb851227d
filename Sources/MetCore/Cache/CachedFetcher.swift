/// The tier below memory today: asks the upstream once for all concurrent requests of a key
/// (single flight), stores the answer in the memory tier, stands in an expired entry when the
/// upstream fails (stale-if-error), and refreshes entries served while revalidating, one refresh
/// per key. Counts each outcome. One instance serves every loop.
final class CachedFetcher: EntryResolver {
    /// Upstream fetches in progress; internal so tests and `/health` can see them.
    let flights = SingleFlight<Fill>()
    private let client: MetClient
    private let cache: MemoryCache
    private let time: any TimeSource
    private let freshness: FreshnessPolicy
    private let compress: (@Sendable ([UInt8]) -> [UInt8])?
    /// For each key refreshed in the background (stale-while-revalidate), the time before which
    /// no new refresh starts: infinity while one runs, a second after one failed (so that stale
    /// answers during an outage or a block do not start a refresh each), in seconds since 1970.
    private let refreshes = Locked([String: Double]())
    /// How long after a failed refresh the next may start, in seconds.
    static let refreshRetryInterval: Double = 1
    /// Past this many keys, the table forgets the failures whose wait is over.
    private static let refreshTableBound = 4_096

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
        let (result, joined) = await fill(resource, key: key)
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

    func revalidate(_ resource: MetResource, stale: CacheEntry) {
        let key = stale.key
        let now = time.now()
        let starts = refreshes.withLock { refreshes -> Bool in
            if let notBefore = refreshes[key], now < notBefore { return false }
            if refreshes.count >= Self.refreshTableBound { refreshes = refreshes.filter { $0.value > now } }
            refreshes[key] = .infinity
            return true
        }
        guard starts else { return }
        // Unstructured on purpose: the refresh belongs to no request, so no hang-up cancels it. A
        // failure stores nothing, and memory keeps the stale entry.
        Task {
            let (result, _) = await self.fill(resource, key: key)
            let retry = self.time.now() + Self.refreshRetryInterval
            self.refreshes.withLock { refreshes in
                if case .success = result { refreshes[key] = nil } else { refreshes[key] = retry }
            }
        }
    }

    /// Fetches `resource` once for every concurrent caller (single flight) and stores the answer,
    /// unless memory holds a fresh entry by the time the flight starts.
    private func fill(_ resource: MetResource, key: String) async -> (result: Result<Fill, UpstreamError>, joined: Bool)
    {
        await flights.run(key) { [client, cache, time, freshness, compress] in
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
    }

    /// Background refreshes running now (for tests).
    var refreshesRunning: Int { refreshes.withLock { $0.values.count { $0 == .infinity } } }
}

/// What a flight brought: the entry, and whether the upstream was asked for it.
struct Fill: Sendable {
    let entry: CacheEntry
    let fetched: Bool
}
