/// The tiers below memory: for all concurrent requests of a key at once (single flight), reads the
/// persistent tier, else asks the upstream and stores the answer in memory and the persistent
/// tier; stands in an expired entry when the upstream fails (stale-if-error), and refreshes
/// entries served while revalidating, one refresh per key. Counts each outcome. One instance
/// serves every loop.
final class CachedFetcher: EntryResolver {
    /// Upstream fetches in progress; internal so tests and `/health` can see them.
    let flights = SingleFlight<Fill>()
    private let client: MetClient
    private let cache: MemoryCache
    private let disk: (any PersistentTier)?
    private let time: any TimeSource
    private let freshness: FreshnessPolicy
    private let compress: (@Sendable ([UInt8]) -> [UInt8])?
    /// Where each persistent-tier lookup's result is counted (`/metrics`).
    private let metrics: ServerMetrics
    /// For each key refreshed in the background (stale-while-revalidate), the time before which
    /// no new refresh starts: infinity while one runs, a second after one failed (so that stale
    /// answers during an outage or a block do not start a refresh each), in seconds since 1970.
    private let refreshes = Locked([String: Double]())
    /// How long after a failed refresh the next may start, in seconds.
    static let refreshRetryInterval: Double = 1
    /// Past this many keys, the table forgets the failures whose wait is over.
    private static let refreshTableBound = 4_096

    /// - Parameters:
    ///   - disk: the persistent tier, read on a memory miss before the upstream; nil for none.
    ///   - freshness: the lifetimes of the entries it stores.
    ///   - compress: gzip, to keep a compressed copy of each entry; nil keeps identity bodies only.
    init(
        client: MetClient, cache: MemoryCache, disk: (any PersistentTier)?, time: any TimeSource,
        freshness: FreshnessPolicy, compress: (@Sendable ([UInt8]) -> [UInt8])?, metrics: ServerMetrics
    ) {
        self.metrics = metrics
        self.client = client
        self.cache = cache
        self.disk = disk
        self.time = time
        self.freshness = freshness
        self.compress = compress
    }

    func resolve(_ resource: MetResource, cached: CacheEntry?) async -> Resolution {
        let key = resource.cacheKey
        let (result, joined) = await fill(resource, key: key, refreshing: false)
        // Only this request's own cancellation (its client left) ends here; the answer goes nowhere.
        if case .failure(.cancelled) = result { return .cancelled }
        switch result {
        case .success(let fill):
            let outcome: CacheOutcome
            switch fill.source {
            // Joining a fetch, or finding the entry another one stored, is a collapsed request.
            case .upstream: outcome = joined ? .collapsed : .miss
            case .memory: outcome = .collapsed
            case .disk: outcome = fill.entry.isFresh(at: time.now()) ? .diskHit : .revalidating
            }
            cache.count(outcome)
            if outcome == .revalidating { revalidate(resource, stale: fill.entry) }
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
            let (result, _) = await self.fill(resource, key: key, refreshing: true)
            let retry = self.time.now() + Self.refreshRetryInterval
            self.refreshes.withLock { refreshes in
                if case .success = result { refreshes[key] = nil } else { refreshes[key] = retry }
            }
        }
    }

    /// What `warm(_:)` did for one resource.
    enum WarmOutcome: Sendable {
        /// A tier held it fresh: the upstream was not asked.
        case fresh
        /// Fetched and stored in both tiers.
        case fetched
        /// The upstream failed; nothing was stored.
        case failed
    }

    /// Makes the cache hold `resource` fresh: nothing when memory does, else the persistent tier's
    /// row when fresh, else a fetch (joining one already running) stored in both tiers. For
    /// `themet warm`, and for `metadataDate` sync once it has marked the entry expired.
    func warm(_ resource: MetResource) async -> WarmOutcome {
        let key = resource.cacheKey
        if let entry = cache.entry(for: key), entry.isFresh(at: time.now()) { return .fresh }
        switch await fill(resource, key: key, refreshing: true).result {
        case .success(let fill): return fill.source == .upstream ? .fetched : .fresh
        case .failure: return .failed
        }
    }

    /// Resolves `resource` once for every concurrent caller (single flight): from memory if a fresh
    /// entry arrived there by the time the flight starts, else from the persistent tier if it holds
    /// one that is fresh (or within stale-while-revalidate, unless `refreshing`), else from the
    /// upstream, storing the answer in both tiers. When the upstream fails, an expired entry the
    /// persistent tier held goes to memory, where stale-if-error finds it.
    private func fill(_ resource: MetResource, key: String, refreshing: Bool) async -> (
        result: Result<Fill, UpstreamError>, joined: Bool
    ) {
        await flights.run(key) { [client, cache, disk, time, freshness, compress, metrics] in
            // A flight for this key may have stored its entry between the driver's lookup on the
            // loop and this flight's start: then there is nothing to ask the upstream.
            if let stored = cache.entry(for: key), stored.isFresh(at: time.now()) {
                return .success(Fill(entry: stored, source: .memory))
            }
            let kept = disk?.entry(for: key)
            if disk != nil { metrics.countLookup(.disk, LookupResult(kept, at: time.now())) }
            if let kept, let served = kept.servedOutcome(at: time.now()), served == .hit || !refreshing {
                cache.store(kept)
                return .success(Fill(entry: kept, source: .disk))
            }
            let result = await client.fetch(resource).map { answer in
                let entry = CacheEntry(
                    key: key, kind: resource.kind, status: answer.status, body: answer.body, storedAt: time.now(),
                    policy: freshness, message: answer.message, details: answer.details, compress: compress)
                cache.store(entry)
                disk?.store(entry)
                return Fill(entry: entry, source: .upstream)
            }
            if case .failure = result, let kept, cache.entry(for: key) == nil { cache.store(kept) }
            return result
        }
    }

    /// Background refreshes running now (for tests).
    var refreshesRunning: Int { refreshes.withLock { $0.values.count { $0 == .infinity } } }
}

/// What a flight brought: the entry, and the tier it came from.
struct Fill: Sendable {
    enum Source: Sendable {
        /// Memory: another flight stored it after the driver looked.
        case memory
        /// The persistent tier (now in memory too).
        case disk
        /// The upstream (now in both tiers).
        case upstream
    }

    let entry: CacheEntry
    let source: Source
}
