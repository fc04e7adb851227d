/// The tiers below memory: for all concurrent requests of a key at once (single flight), reads the
/// persistent tier, then the shared tier, else asks the upstream (one instance of the group at a
/// time, when there is a shared tier) and stores the answer in every tier; stands in an expired entry when the upstream fails (stale-if-error), and refreshes
/// entries served while revalidating, one refresh per key. Counts each outcome. One instance
/// serves every loop.
///
/// One per kind of resource: the API's records (`MetResource`, the pipeline driver's resolver)
/// and the image host's pictures (`ImageResource`), each over its own tiers and client.
package final class CachedFetcher<Resource: CachedResource>: Sendable {
    /// Upstream fetches in progress; internal so tests and `/health` can see them.
    package let flights = SingleFlight<Fill>()
    private let client: MetClient
    private let cache: MemoryCache
    private let disk: (any PersistentTier)?
    private let shared: (any SharedTier)?
    private let time: any TimeSource
    private let freshness: FreshnessPolicy
    private let compress: (@Sendable ([UInt8]) -> [UInt8])?
    /// Where each persistent-tier lookup's result is counted (`/metrics`).
    private let metrics: ServerMetrics
    /// What each resolution decided, at debug level.
    private let logger: Logger
    /// For each key refreshed in the background (stale-while-revalidate), the time before which
    /// no new refresh starts: infinity while one runs, a second after one failed (so that stale
    /// answers during an outage or a block do not start a refresh each), in seconds since 1970.
    private let refreshes = Locked([String: Double]())
    /// How long after a failed refresh the next may start, in seconds.
    package static var refreshRetryInterval: Double { 1 }
    /// Past this many keys, the table forgets the failures whose wait is over.
    private static var refreshTableBound: Int { 4_096 }
    /// Seconds between two looks at the shared tier while another instance holds a key's fill
    /// lock: the bound on a wait whose notice was lost.
    package static var sharedPollInterval: Double { 0.25 }

    /// - Parameters:
    ///   - disk: the persistent tier, read on a memory miss before the upstream; nil for none.
    ///   - shared: the tier shared with other instances, read after the persistent tier; nil for
    ///     none.
    ///   - freshness: the lifetimes of the entries it stores.
    ///   - compress: gzip, to keep a compressed copy of each entry; nil keeps identity bodies only.
    package init(
        client: MetClient, cache: MemoryCache, disk: (any PersistentTier)?, shared: (any SharedTier)? = nil,
        time: any TimeSource, freshness: FreshnessPolicy, compress: (@Sendable ([UInt8]) -> [UInt8])?,
        metrics: ServerMetrics, logger: Logger
    ) {
        self.metrics = metrics
        self.logger = logger
        self.client = client
        self.cache = cache
        self.disk = disk
        self.shared = shared
        self.time = time
        self.freshness = freshness
        self.compress = compress
    }

    /// `resource` as memory holds it when it may be served from there: fresh (a hit), or within
    /// stale-while-revalidate (then its refresh starts, for `claim` in the background). Counts the
    /// outcome. Nil when memory holds nothing servable: `resolve` goes below it. Any thread; never
    /// waits.
    package func fromMemory(_ resource: Resource, claim: UpstreamClaim) -> (entry: CacheEntry, outcome: CacheOutcome)? {
        guard let held = cache.entry(for: resource.cacheKey), let outcome = held.servedOutcome(at: time.now()) else {
            return nil
        }
        cache.count(outcome)
        if outcome == .revalidating { revalidate(resource, stale: held, claim: claim.inBackground) }
        return (held, outcome)
    }

    /// What memory holds for `resource`, fresh or not, without counting a lookup (what `warm` just
    /// stored, for instance). Any thread; never waits.
    package func held(_ resource: Resource) -> CacheEntry? {
        cache.entry(for: resource.cacheKey)
    }

    /// `fromMemory`, else `resolve` with what memory holds standing in if the upstream fails.
    package func lookUp(_ resource: Resource, claim: UpstreamClaim) async -> Resolution {
        if let (entry, outcome) = fromMemory(resource, claim: claim) { return .entry(entry, outcome) }
        return await resolve(resource, cached: cache.entry(for: resource.cacheKey), claim: claim, onPlaced: nil)
    }

    package func resolveAtOnce(_ resource: Resource, at now: Double) -> AtOnceResolution {
        switch disk?.entryAtOnce(for: resource.cacheKey) {
        case .found(let kept) where kept.isFresh(at: now):
            metrics.countLookup(.disk, .hit)
            cache.admit(kept)
            cache.count(.diskHit)
            return .resolved(.entry(kept, .diskHit))
        case .declined: return .declined
        case .found, .absent, nil: return shared == nil ? .declined : .askShared
        }
    }

    package func resolveShared(_ resource: Resource, then: @escaping @Sendable (Resolution?) -> Void) -> Bool {
        guard let shared else { return false }
        let key = resource.cacheKey
        shared.entrySoon(for: key) { [self] lookup in
            let now = time.now()
            guard case .found(let entry) = lookup, entry.isFresh(at: now) else { return then(nil) }
            // The persistent tier's read on the loop found nothing fresh, and was not counted.
            if disk != nil { metrics.countLookup(.disk, .miss) }
            metrics.countLookup(.redis, .hit)
            keepLocally(entry)
            cache.count(.sharedHit)
            logger.debug("cache \(key): sharedHit, without a task")
            then(.entry(entry, .sharedHit))
        }
        return true
    }

    package func resolve(
        _ resource: Resource, cached: CacheEntry?, claim: UpstreamClaim, onPlaced: (@Sendable () -> Void)?
    ) async -> Resolution {
        let key = resource.cacheKey
        var (result, joined) = await fill(resource, key: key, refreshing: false, claim: claim, onPlaced: onPlaced)
        if case .failure(.clientQueueFull) = result, joined {
            // Refused for the clients that were waiting when the fetch was queued, before this
            // claim joined: this client's own claim is judged on its own.
            (result, joined) = await fill(resource, key: key, refreshing: false, claim: claim, onPlaced: nil)
        }
        // Only this request's own cancellation (its client left) ends here; the answer goes nowhere.
        if case .failure(.cancelled) = result { return .cancelled }
        switch result {
        case .success(let fill):
            let outcome: CacheOutcome
            switch fill.source {
            // Joining a fetch, or finding the entry another one stored, is a collapsed request.
            case .upstream: outcome = joined ? .collapsed : .miss
            case .memory, .sharedFill: outcome = .collapsed
            case .disk: outcome = fill.entry.isFresh(at: time.now()) ? .diskHit : .revalidating
            case .shared: outcome = fill.entry.isFresh(at: time.now()) ? .sharedHit : .revalidating
            }
            cache.count(outcome)
            logger.debug("cache \(key): \(outcome.rawValue) (\(fill.source))")
            if outcome == .revalidating { revalidate(resource, stale: fill.entry, claim: claim.inBackground) }
            return .entry(fill.entry, outcome)
        case .failure(let error):
            cache.count(joined ? .collapsed : .miss)
            // Another request may have stored an entry since the driver looked.
            if let stale = cached ?? cache.entry(for: key), stale.isUsableWhenStale(at: time.now()) {
                cache.count(.stale)
                logger.debug("cache \(key): the Met failed (\(error.logDescription)); serving the stale entry")
                return .entry(stale, .stale)
            }
            logger.debug("cache \(key): the Met failed (\(error.logDescription)); no stale entry to stand in")
            return .failed(error)
        }
    }

    package func revalidate(_ resource: Resource, stale: CacheEntry, claim: UpstreamClaim) {
        let key = stale.key
        let now = time.now()
        let starts = refreshes.withLock { refreshes -> Bool in
            if let notBefore = refreshes[key], now < notBefore { return false }
            if refreshes.count >= Self.refreshTableBound { refreshes = refreshes.filter { $0.value > now } }
            refreshes[key] = .infinity
            return true
        }
        guard starts else { return }
        logger.debug("cache \(key): served while revalidating; refreshing it in the background")
        // Unstructured on purpose: the refresh belongs to no request, so no hang-up cancels it. A
        // failure stores nothing, and memory keeps the stale entry.
        Task {
            let (result, _) = await self.fill(resource, key: key, refreshing: true, claim: claim)
            let retry = self.time.now() + Self.refreshRetryInterval
            self.refreshes.withLock { refreshes in
                if case .success = result { refreshes[key] = nil } else { refreshes[key] = retry }
            }
        }
    }

    /// What `warm(_:)` did for one resource.
    package enum WarmOutcome: Sendable {
        /// A tier held it fresh: the upstream was not asked.
        case fresh
        /// Fetched, and stored in every tier.
        case fetched
        /// The upstream failed (why); nothing was stored.
        case failed(UpstreamError)
    }

    /// Makes the cache hold `resource` fresh: nothing when memory does, else the persistent tier's
    /// or the shared tier's entry when fresh, else a fetch (joining one already running) stored in
    /// every tier. For
    /// `themet warm`, and for `metadataDate` sync once it has marked the entry expired.
    package func warm(_ resource: Resource) async -> WarmOutcome {
        let key = resource.cacheKey
        if let entry = cache.entry(for: key), entry.isFresh(at: time.now()) { return .fresh }
        switch await fill(resource, key: key, refreshing: true, claim: .server).result {
        case .success(let fill): return fill.source == .upstream ? .fetched : .fresh
        case .failure(let error): return .failed(error)
        }
    }

    /// Resolves `resource` once for every concurrent caller (single flight): from memory if a fresh
    /// entry arrived there by the time the flight starts, else from the persistent tier if it holds
    /// one that is fresh (or within stale-while-revalidate, unless `refreshing`), else from the
    /// shared tier likewise, else from the upstream (see `fillFromGroup`), storing the answer in
    /// every tier. When the upstream fails, the freshest expired entry a tier held goes to memory,
    /// where stale-if-error finds it. `claim` is whose fill it is, for the pacer; `onPlaced` is
    /// told when the fetch has its place (see `UpstreamDemand`).
    private func fill(
        _ resource: Resource, key: String, refreshing: Bool, claim: UpstreamClaim,
        onPlaced: (@Sendable () -> Void)? = nil
    ) async -> (result: Result<Fill, UpstreamError>, joined: Bool) {
        await flights.run(key, claim: claim, onPlaced: onPlaced) { [self] demand in
            // A flight for this key may have stored its entry between the driver's lookup on the
            // loop and this flight's start: then there is nothing to ask the upstream.
            let held = cache.entry(for: key)
            if let held, held.isFresh(at: time.now()) {
                return .success(Fill(entry: held, source: .memory))
            }
            let kept = disk?.entry(for: key)
            if disk != nil { metrics.countLookup(.disk, LookupResult(kept, at: time.now())) }
            if let kept, let served = kept.servedOutcome(at: time.now()), served == .hit || !refreshing {
                cache.admit(kept)
                return .success(Fill(entry: kept, source: .disk))
            }
            // The newest expired copy either local tier holds: what a conditional request names,
            // and what stands in if the upstream fails.
            let standIn = [held, kept].compactMap { $0 }.max { $0.storedAt < $1.storedAt }
            guard let shared else { return await fetch(resource, key: key, standIn: standIn, demand: demand) }
            return await fillFromGroup(
                resource, key: key, refreshing: refreshing, shared: shared, kept: standIn, demand: demand)
        }
    }

    /// The shared tier's part of a fill: its entry when it holds a usable one; else the instance
    /// that takes the key's lock fetches and the others wait for its notice (or poll every
    /// `sharedPollInterval`) and read the entry it stored, sharing its failure if it failed. A lock
    /// whose holder died or fell silent expires within the tier's lease, and the next to try takes
    /// it. Whenever the tier is unavailable, this instance fetches by itself, and so it does when
    /// the wait has lasted a whole fetch timeout (as long as a live holder's fetch may take): the
    /// holder's release or entry was lost.
    private func fillFromGroup(
        _ resource: Resource, key: String, refreshing: Bool, shared: any SharedTier, kept: CacheEntry?,
        demand: UpstreamDemand
    ) async -> Result<Fill, UpstreamError> {
        var standIn = kept
        switch await shared.entry(for: key) {
        case .found(let entry):
            let now = time.now()
            metrics.countLookup(.redis, LookupResult(entry, at: now))
            if let served = entry.servedOutcome(at: now), served == .hit || !refreshing {
                keepLocally(entry)
                return .success(Fill(entry: entry, source: .shared))
            }
            if entry.storedAt > (standIn?.storedAt ?? -.infinity) { standIn = entry }
        case .missing:
            metrics.countLookup(.redis, .miss)
        case .unavailable:
            return await fetch(resource, key: key, standIn: standIn, demand: demand)
        }
        let deadline = time.now() + client.fetchTimeout
        while true {
            switch await shared.lock(key) {
            case .unavailable:
                return await fetch(resource, key: key, standIn: standIn, demand: demand)
            case .acquired(let token):
                // The previous holder may have stored the entry and let go between the look above
                // and this lock: then it is there now, and fetching it again would be a duplicate.
                if case .found(let entry) = await shared.entry(for: key), entry.isFresh(at: time.now()) {
                    shared.release(key, token: token, outcome: .stored)
                    keepLocally(entry)
                    return .success(Fill(entry: entry, source: .sharedFill))
                }
                let result = await fetch(resource, key: key, standIn: standIn, demand: demand)
                switch result {
                case .success: shared.release(key, token: token, outcome: .stored)
                // Nothing asked of the Met: a waiter of the group takes the lock and fetches for itself.
                case .failure(.cancelled), .failure(.clientQueueFull):
                    shared.release(key, token: token, outcome: .abandoned)
                case .failure(let error): shared.release(key, token: token, outcome: .failed(error))
                }
                return result
            case .held:
                demand.placed()  // another instance fetches it
                let now = time.now()
                guard now < deadline else { return await fetch(resource, key: key, standIn: standIn, demand: demand) }
                let wake = min(now + Self.sharedPollInterval, deadline)
                switch await shared.awaitFill(key, freshAt: now, until: wake) {
                case .found(let entry):
                    keepLocally(entry)
                    return .success(Fill(entry: entry, source: .sharedFill))
                case .failed(let error):
                    return failed(error, standIn: standIn)
                case .nothing:
                    continue
                case .unavailable:
                    return await fetch(resource, key: key, standIn: standIn, demand: demand)
                }
            }
        }
    }

    /// Asks the upstream for `demand` (conditionally, when `standIn` keeps the upstream's
    /// validators) and stores the answer in every tier; on a failure, `standIn` (an expired entry a
    /// tier held) goes to memory for stale-if-error.
    private func fetch(
        _ resource: Resource, key: String, standIn: CacheEntry?, demand: UpstreamDemand
    ) async -> Result<Fill, UpstreamError> {
        let result = await client.fetch(resource.revalidating(standIn), demand: demand).flatMap {
            answer -> Result<Fill, UpstreamError> in
            guard
                let entry = resource.entry(
                    from: answer, key: key, standIn: standIn, storedAt: time.now(), policy: freshness,
                    compress: compress)
            else { return .failure(.malformed("a 304 for a copy this server does not hold")) }
            cache.store(entry)
            disk?.store(entry)
            shared?.store(entry)
            return .success(Fill(entry: entry, source: .upstream))
        }
        if case .failure(let error) = result { return failed(error, standIn: standIn) }
        return result
    }

    /// A failed fill: `standIn` goes to memory (unless a newer entry arrived there) for
    /// stale-if-error.
    private func failed(_ error: UpstreamError, standIn: CacheEntry?) -> Result<Fill, UpstreamError> {
        if let standIn, cache.entry(for: standIn.key) == nil { cache.store(standIn) }
        return .failure(error)
    }

    /// An entry from the shared tier goes to the persistent tier, and to memory when admitted
    /// there (see `MemoryCache.admit`).
    private func keepLocally(_ entry: CacheEntry) {
        cache.admit(entry)
        disk?.store(entry)
    }

    /// Background refreshes running now (for tests).
    package var refreshesRunning: Int { refreshes.withLock { $0.values.count { $0 == .infinity } } }
}

/// What a flight brought: the entry, and the tier it came from.
package struct Fill: Sendable {
    package enum Source: Sendable {
        /// Memory: another flight stored it after the driver looked.
        case memory
        /// The persistent tier (now in memory too).
        case disk
        /// The shared tier, found there at once (now in the local tiers too).
        case shared
        /// The shared tier, stored there by the instance that fetched it while this one waited.
        case sharedFill
        /// The upstream (now in every tier).
        case upstream
    }

    package let entry: CacheEntry
    package let source: Source
}

extension CachedFetcher: EntryResolver where Resource == MetResource {}
