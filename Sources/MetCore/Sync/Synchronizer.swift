import Foundation
import MetEngine

/// What one `metadataDate` sync did.
public struct SyncReport: Sendable, Equatable {
    /// The day asked for (`YYYY-MM-DD`, UTC): changes on or after it were listed.
    public var since: String
    /// IDs the Met listed as changed.
    public var listed = 0
    /// Of those, how many a tier held: each was marked expired and refreshed.
    public var cached = 0
    /// Refreshes that stored a new answer, and those that failed (their entries stay expired,
    /// so the next request refreshes them in its turn).
    public var refreshed = 0
    public var failed = 0
    /// Whether nothing was done because another instance of the group holds the sync's lock.
    public var anotherInstanceSyncing = false
}

/// `metadataDate` sync: asks the Met which records changed since the last successful sync (at
/// most one object lifetime back: anything older has expired anyway), marks the cached ones
/// among them expired in both tiers, and refreshes them through the pacer, the most recently
/// used first (memory's, in its LRU order, which like eviction leaves entries of its newer half
/// where they are; then the persistent tier's). With a shared tier, the group's copies of the
/// listed records are marked expired too (a copy stored before this run began may predate the
/// change), and every other instance is told to mark its own local copies expired (as a soft
/// purge does), so that neither this refresh nor another instance serves them as fresh; the next
/// request for one that only the group holds refreshes it.
///
/// One sync for a group: with a shared tier, a run first takes the group's sync lock (a fill lock
/// on `groupLock`, renewed while it runs, lost within seconds if its holder dies); while another
/// instance holds it, a run does nothing and says so. The group's last successful sync is
/// recorded in the tier beside each instance's own (`sync.json`), and a run asks for the changes
/// since the later of the two, so the instances take turns instead of each listing and
/// refreshing the same changes; the others learn of them through the expiry notices. When the
/// tier is unavailable, a run syncs alone, as without one.
///
/// Any thread; one run at a time per instance is the caller's business (`themet sync`, or the
/// server's periodic sync).
public final class Synchronizer: Sendable {
    private let client: MetClient
    /// Marks the local copies expired.
    private let purges: PurgeHandler
    private let shared: (any SharedTier)?
    private let fetcher: CachedFetcher<MetResource>
    private let state: SyncState
    /// How far back a sync with no record of a previous one looks: the object lifetime, in seconds.
    private let lookBack: Double
    private let time: any TimeSource
    private let logger: Logger

    /// A synchronizer over `engine`'s tiers and client, keeping its state (`sync.json`) in
    /// `configuration`'s data directory and looking at most one object lifetime back.
    public init(engine: CacheEngine, configuration: ServerConfiguration) {
        client = engine.client
        purges = engine.purges
        shared = engine.shared
        fetcher = engine.fetcher
        state = SyncState(directory: configuration.cache.dataDirectory, logger: engine.logger)
        lookBack = configuration.cache.freshness.object
        time = engine.time
        logger = engine.logger
    }

    /// The lock a group's sync is taken under: not a cache key (those begin with `/` or a scheme).
    static let groupLock = "metadataDate-sync"

    /// When the last successful sync started (seconds since 1970): this instance's or, with a
    /// shared tier, the group's, whichever is later; nil when there was none.
    public func lastSync() async -> Double? {
        let own = state.load()
        guard let shared, case .startedAt(let group) = await shared.lastGroupSync() else { return own }
        return max(own ?? group, group)
    }

    /// One sync. Fails only when the Met's list could not be had (nothing is marked then).
    public func run() async -> Result<SyncReport, UpstreamError> {
        var token: String?
        if let shared {
            switch await shared.lock(Self.groupLock) {
            case .held:
                logger.info("sync: another instance of the group is syncing; this one leaves it the changes")
                return .success(SyncReport(since: "", anotherInstanceSyncing: true))
            case .acquired(let held): token = held
            case .unavailable: break
            }
        }
        defer {
            if let token { shared?.release(Self.groupLock, token: token, outcome: .abandoned) }
        }
        let started = time.now()
        let since = max(await lastSync() ?? -.infinity, started - lookBack)
        let day = Self.day(of: since)
        var report = SyncReport(since: day)
        let listed = await client.fetch(MetResource.objectList(departmentIds: [], metadataDate: day))
        let ids: [Int]
        switch listed {
        case .success(let answer):
            guard case .ids(let list) = answer.details else { return .failure(.malformed("no ID list")) }
            ids = list.ids
        case .failure(let error):
            logger.warning("sync: cannot list the records changed since \(day): \(error.logDescription)")
            return .failure(error)
        }
        report.listed = ids.count

        // Mark every cached one expired, in both tiers, before refreshing any: a request in the
        // meantime then gets the old record at once and refreshes it (stale-while-revalidate).
        var inMemory: [(resource: MetResource, lastUse: Int)] = []
        var onDiskOnly: [MetResource] = []
        let now = time.now()
        for id in ids {
            let resource = MetResource.object(id: id)
            let key = resource.cacheKey
            if let shared { _ = await shared.expire(key, at: now) }
            let copies = purges.expireLocally(key, at: now)
            if let lastUse = copies.memoryLastUse {
                inMemory.append((resource, lastUse))
            } else if copies.onDisk {
                onDiskOnly.append(resource)
            }
        }
        let order = inMemory.sorted { $0.lastUse > $1.lastUse }.map(\.resource) + onDiskOnly
        report.cached = order.count
        for resource in order {
            if case .failed = await fetcher.warm(resource) { report.failed += 1 } else { report.refreshed += 1 }
        }
        shared?.recordGroupSync(startedAt: started)
        do {
            try state.save(started)
        } catch {
            logger.warning("sync: cannot record it in \(state.path): \(error.localizedDescription)")
        }
        logger.info(
            "sync since \(day): \(report.listed) changed at the Met, \(report.cached) cached, "
                + "\(report.refreshed) refreshed, \(report.failed) failed")
        return .success(report)
    }

    /// `YYYY-MM-DD` of `seconds` since 1970, in UTC.
    static func day(of seconds: Double) -> String {
        let date = Date(timeIntervalSince1970: seconds)
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(secondsFromGMT: 0) ?? calendar.timeZone
        let parts = calendar.dateComponents([.year, .month, .day], from: date)
        return String(format: "%04d-%02d-%02d", parts.year ?? 1970, parts.month ?? 1, parts.day ?? 1)
    }
}
