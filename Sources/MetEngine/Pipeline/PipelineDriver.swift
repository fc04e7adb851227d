/// Runs pipelines: meets each need from fresh memory entries on the calling (loop) thread while it
/// can, and hands the rest of the work to a suspension when something is missing. The suspension
/// resolves the missing entries through the tiers below memory and resumes the same pipeline.
///
/// Each key is looked up in memory once per need: what the loop thread found (fresh or expired)
/// travels with the suspension. One instance serves every loop; its state is thread-safe.
public final class PipelineDriver: Sendable {
    private let cache: MemoryCache
    private let resolver: any EntryResolver
    @usableFromInline let time: any TimeSource
    private let logger: Logger
    /// Where each memory lookup's result is counted (`/metrics`).
    private let metrics: ServerMetrics
    /// The pacer: each client's share of background fetches (`clientLimit`), and when a refused one
    /// may ask again.
    private let pacer: UpstreamPacer
    /// Object fetches that pipelines started in the background (for needs with a `wait`) and that
    /// have not ended: in all, and per client how many for each key (a client that asks again for
    /// a page while its fetches run starts more for the same keys, which join the same flights).
    /// Bounded by `maxBackgroundFills` in all, and by the pacer's `clientLimit` distinct keys per
    /// client.
    private let backgroundFills = Locked((total: 0, byClient: [String?: [String: Int]]()))
    /// The most background fetches at once, whoever started them: a bound on the tasks, past which
    /// resources stay `.pending` (with a warning); each client's own bound comes first.
    package static let maxBackgroundFills = 10_000

    package init(
        cache: MemoryCache, resolver: any EntryResolver, pacer: UpstreamPacer, time: any TimeSource, logger: Logger,
        metrics: ServerMetrics
    ) {
        self.metrics = metrics
        self.cache = cache
        self.resolver = resolver
        self.pacer = pacer
        self.time = time
        self.logger = logger
    }

    /// Background fetches running now (for tests).
    package var backgroundFillsRunning: Int { backgroundFills.withLock { $0.total } }

    /// Advances `pipeline` on the calling thread while memory meets its needs (with fresh entries,
    /// or expired ones within stale-while-revalidate, whose refresh it starts), and the tier below
    /// memory the one entry a need may lack (see `servedAtOnce`). Never waits for the upstream; a
    /// fresh hit allocates no task. The suspension it may return starts nothing until run.
    /// `claim` is whose request it is: its fetches wait in that client's lane of the pacer.
    ///
    /// Inlinable, like `resume`, so that each route's module specializes the loop for its own
    /// pipeline type (public for that: Swift does not inline `package` functions across modules).
    /// Unspecialized, every step went through witness tables and boxed copies, and a memory hit
    /// cost up to a fifth more CPU. The work that is not the loop's stays behind it, here.
    @inlinable
    public func start<P: Pipeline>(_ pipeline: consuming P, claim: UpstreamClaim) -> Answer {
        // One reading of the clock: every step here runs within microseconds.
        advance(pipeline, [], at: time.now(), claim: claim)
    }

    /// `start` from a later step: `pipeline` given `resolutions` at `now`.
    @inlinable
    func advance<P: Pipeline>(
        _ pipeline: consuming P, _ resolutions: [Resolution], at now: Double, claim: UpstreamClaim
    ) -> Answer {
        var resolutions = resolutions
        while true {
            switch pipeline.advance(resolutions, at: now) {
            case .respond(let response):
                return .ready(response)
            case .peek(let entries, let touch):
                resolutions = peek(entries, touch: touch, at: now)
            case .look(let resources):
                resolutions = look(resources, at: now)
            case .need(let need):
                // What memory holds for every key, each looked up once, goes with the suspension.
                let found = lookUp(need.resources, at: now)
                switch servedAtOnce(need, found: found, at: now, claim: claim) {
                case .met(let met):
                    resolutions = met
                case .askShared(let missing):
                    return .suspended(
                        awaitShared(pipeline, need, found: found, missing: missing, at: now, claim: claim))
                case .inTask:
                    return .suspended(
                        Suspension { [pipeline] in
                            await self.resume(pipeline, need, found: found, at: now, claim: claim)
                        })
                }
            }
        }
    }

    /// How a need is met on the loop thread (`servedAtOnce`).
    @usableFromInline
    enum AtOnce {
        /// Every resolution, at once.
        case met([Resolution])
        /// All but the entry at this index, which the tier below memory does not hold and the
        /// shared tier may (`EntryResolver.resolveShared`).
        case askShared(Int)
        /// In a task (`resume`).
        case inTask
    }

    /// `.met` with the resolutions of `need` when memory serves every entry of `found` at `now`
    /// but at most one, and the resolver meets that one at once (a fresh entry of the persistent
    /// tier, read on this thread), each counted (and refreshed when served while it is
    /// revalidated); `.askShared` when the one missing is for the shared tier to answer;
    /// otherwise `.inTask`, with nothing counted. A need that lacks more entries goes to a task
    /// whole: reading them here one by one would hold the loop for as many reads, and a partial
    /// result would be counted twice.
    @usableFromInline
    func servedAtOnce(_ need: Need, found: [CacheEntry?], at now: Double, claim: UpstreamClaim) -> AtOnce {
        var resolutions: [Resolution] = []
        resolutions.reserveCapacity(found.count)
        var missing: Int?
        for (index, entry) in found.enumerated() {
            if let entry, let outcome = entry.servedOutcome(at: now) {
                resolutions.append(.entry(entry, outcome))
            } else {
                guard missing == nil else { return .inTask }
                missing = index
                resolutions.append(.pending)
            }
        }
        if let missing {
            switch resolver.resolveAtOnce(need.resources[missing], at: now) {
            case .resolved(let resolution): resolutions[missing] = resolution
            case .askShared: return .askShared(missing)
            case .declined: return .inTask
            }
        }
        countServed(need, resolutions, except: missing, claim: claim)
        return .met(resolutions)
    }

    /// Counts the resolutions of `need` met from memory, but the one at `except`, and starts the
    /// refresh of those served while they are revalidated.
    private func countServed(_ need: Need, _ resolutions: [Resolution], except: Int?, claim: UpstreamClaim) {
        for (index, (resource, resolution)) in zip(need.resources, resolutions).enumerated() where index != except {
            served(resource, resolution, claim: claim)
        }
    }

    /// The resolutions of `need` once `resolution` met the entry at `missing`, the others as memory
    /// served them from `found` at `now` (counted now).
    @usableFromInline
    func met(
        _ need: Need, found: [CacheEntry?], missing: Int, by resolution: Resolution, at now: Double,
        claim: UpstreamClaim
    ) -> [Resolution] {
        var resolutions = found.map { entry -> Resolution in
            guard let entry, let outcome = entry.servedOutcome(at: now) else { return .pending }
            return .entry(entry, outcome)
        }
        resolutions[missing] = resolution
        countServed(need, resolutions, except: missing, claim: claim)
        return resolutions
    }

    /// `EntryResolver.resolveShared`, for the inlined code above.
    @usableFromInline
    func askShared(_ resource: MetResource, then: @escaping @Sendable (Resolution?) -> Void) -> Bool {
        resolver.resolveShared(resource, then: then)
    }

    /// The rest of `pipeline` once the shared tier answers for the entry at `missing` of `need`
    /// (the others were `found` in memory at `now`): begun on the loop thread, with no task; the
    /// reply's fresh entry resumes the pipeline where the reply arrives, and anything else (no
    /// entry, an expired one, no answer in time) sends the whole need to a task, as if the reply
    /// had not been asked for. The memory entries are counted only once the reply did.
    @inlinable
    func awaitShared<P: Pipeline>(
        _ pipeline: P, _ need: Need, found: [CacheEntry?], missing: Int, at now: Double, claim: UpstreamClaim
    ) -> Suspension {
        let inTask = Suspension { [pipeline] in await self.resume(pipeline, need, found: found, at: now, claim: claim) }
        return Suspension(awaiting: { [pipeline] then in
            let asked = self.askShared(need.resources[missing]) { resolution in
                guard let resolution else { return then(.suspended(inTask)) }
                let resolutions = self.met(need, found: found, missing: missing, by: resolution, at: now, claim: claim)
                then(self.advance(pipeline, resolutions, at: self.time.now(), claim: claim))
            }
            if !asked { then(.suspended(inTask)) }
        })
    }

    /// The memory entries of `resources`, in order: one lookup for one resource, else one taking
    /// of the cache's lock for all of them (a search page's objects).
    /// Counts what each lookup found at `now`.
    @usableFromInline
    func lookUp(_ resources: [MetResource], at now: Double) -> [CacheEntry?] {
        let found =
            resources.count == 1
            ? [cache.entry(for: resources[0].cacheKey)] : cache.entries(for: resources.map { $0.cacheKey })
        for entry in found { metrics.countLookup(.memory, LookupResult(entry, at: now)) }
        return found
    }

    /// The rest of `pipeline` in a task: meets `need` (whose memory entries were `found` at `now`),
    /// then every later step, each key looked up in memory once, until the pipeline responds.
    @inlinable
    func resume<P: Pipeline>(
        _ pipeline: P, _ need: Need, found: [CacheEntry?], at now: Double, claim: UpstreamClaim
    ) async -> Response {
        var pipeline = pipeline
        var resolutions = await meet(need, found: found, at: now, claim: claim)
        while true {
            switch pipeline.advance(resolutions, at: time.now()) {
            case .respond(let response):
                return response
            case .peek(let entries, let touch):
                resolutions = peek(entries, touch: touch, at: time.now())
            case .look(let resources):
                resolutions = look(resources, at: time.now())
            case .need(let next):
                let lookedAt = time.now()
                resolutions = await meet(
                    next, found: lookUp(next.resources, at: lookedAt), at: lookedAt, claim: claim)
            }
        }
    }

    /// Counts a resolution met from memory, and starts the refresh of an entry served while it
    /// is revalidated.
    private func served(_ resource: MetResource, _ resolution: Resolution, claim: UpstreamClaim) {
        guard case .entry(let entry, let outcome) = resolution else { return }
        cache.count(outcome)
        if outcome == .revalidating { resolver.revalidate(resource, stale: entry, claim: claim.inBackground) }
    }

    /// The resolutions of a peek (`Step.peek`) at `entries` at `now`: those memory still holds,
    /// fresh, and `.pending` for the rest. They count as hits only when all are held (the one case
    /// in which a kept render is used).
    @usableFromInline
    func peek(_ entries: [CacheEntry], touch: Bool, at now: Double) -> [Resolution] {
        let current = touch ? cache.entries(for: entries.map { $0.key }) : nil
        var allHeld = true
        var resolutions: [Resolution] = []
        resolutions.reserveCapacity(entries.count)
        for (index, entry) in entries.enumerated() {
            let held = current.map { $0[index] === entry } ?? entry.isInMemory
            if held, entry.isFresh(at: now) {
                resolutions.append(.entry(entry, .hit))
            } else {
                allHeld = false
                resolutions.append(.pending)
            }
        }
        if allHeld {
            for _ in resolutions {
                cache.count(.hit)
                metrics.countLookup(.memory, .hit)
            }
        }
        return resolutions
    }

    /// The resolutions of a look (`Step.look`) at `resources` at `now`: the fresh entries memory
    /// holds, as hits, and `.pending` for the rest. Counted as lookups (`/metrics`), not as
    /// served hits: nothing is answered from them as such.
    @usableFromInline
    func look(_ resources: [MetResource], at now: Double) -> [Resolution] {
        guard !resources.isEmpty else { return [] }
        return lookUp(resources, at: now).map { entry in
            guard let entry, entry.isFresh(at: now) else { return .pending }
            return .entry(entry, .hit)
        }
    }

    /// One resolution per resource of `need`: the entries of `found` that memory can serve (fresh,
    /// or within stale-while-revalidate, then refreshed), the others through the resolver (in
    /// order, or in the background until the need's wait ends).
    @usableFromInline
    func meet(_ need: Need, found: [CacheEntry?], at now: Double, claim: UpstreamClaim) async -> [Resolution] {
        var resolutions = [Resolution](repeating: .pending, count: need.resources.count)
        var missing: [Int] = []
        for (index, entry) in found.enumerated() {
            if let entry, let outcome = entry.servedOutcome(at: now) {
                resolutions[index] = .entry(entry, outcome)
                served(need.resources[index], resolutions[index], claim: claim)
            } else {
                missing.append(index)
            }
        }
        guard let wait = need.wait else {
            for index in missing {
                let resolution = await resolver.resolve(
                    need.resources[index], cached: found[index], claim: claim, onPlaced: nil)
                resolutions[index] = resolution
                if case .entry = resolution { continue }
                break  // The rest stay pending: the pipeline stops at this failure.
            }
            return resolutions
        }
        let wanted = missing.map { (need.resources[$0], found[$0]) }
        for (index, resolution) in await fill(wanted, until: now + wait, claim: claim) {
            resolutions[missing[index]] = resolution
        }
        return resolutions
    }

    /// Starts a background resolution for each of `wanted` (joining any already running), and
    /// waits for them until `deadline`, and past it until each has its place with the upstream
    /// (see `FillCollector`). Returns what arrived, by index into `wanted`: a fetch the client had
    /// no room for arrives as its refusal. A client has at most the pacer's `clientLimit`
    /// background fetches under way, so that no flood of batches takes the tasks another client's
    /// page needs; those past its bound are refused at once.
    private func fill(
        _ wanted: [(MetResource, CacheEntry?)], until deadline: Double, claim: UpstreamClaim
    ) async -> [Int: Resolution] {
        // For each wanted resource: started (true), refused for the client's share (false), or
        // left pending (absent) when the total is at its bound.
        let decisions = backgroundFills.withLock { running -> [Int: Bool] in
            var decisions: [Int: Bool] = [:]
            var keys = running.byClient[claim.client] ?? [:]
            for (index, (resource, _)) in wanted.enumerated() where running.total < Self.maxBackgroundFills {
                let key = resource.cacheKey
                if claim.client != nil, keys[key] == nil, keys.count >= pacer.clientLimit {
                    decisions[index] = false
                    continue
                }
                keys[key, default: 0] += 1
                running.total += 1
                decisions[index] = true
            }
            running.byClient[claim.client] = keys.isEmpty ? nil : keys
            return decisions
        }
        var results: [Int: Resolution] = [:]
        if decisions.values.contains(false) {
            let refusal = Resolution.failed(.clientQueueFull(retryAfter: pacer.retryAfter(for: claim.client)))
            for (index, started) in decisions where !started { results[index] = refusal }
        }
        if decisions.count < wanted.count {
            logger.warning("\(wanted.count - decisions.count) fetch(es) left pending: too many background fetches")
        }
        let started = decisions.filter(\.value).keys.sorted()
        guard !started.isEmpty else { return results }
        let collector = FillCollector(expected: started.count)
        for (slot, index) in started.enumerated() {
            let (resource, cached) = wanted[index]
            // Unstructured on purpose: the fetch must outlive this request (its deadline, or its
            // client leaving) so that the cache fills for the next identical request.
            Task {
                let resolution = await self.resolver.resolve(
                    resource, cached: cached, claim: claim, onPlaced: { collector.place(slot) })
                self.backgroundFills.withLock { running in
                    running.total -= 1
                    let key = resource.cacheKey
                    let left = running.byClient[claim.client]?[key].map { $0 - 1 } ?? 0
                    running.byClient[claim.client]?[key] = left > 0 ? left : nil
                    if running.byClient[claim.client]?.isEmpty == true { running.byClient[claim.client] = nil }
                }
                collector.deliver(slot, resolution)
            }
        }
        await collector.wait(until: deadline, time: time)
        for (slot, resolution) in collector.results { results[started[slot]] = resolution }
        return results
    }
}
