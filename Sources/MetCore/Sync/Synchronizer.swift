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
}

/// `metadataDate` sync: asks the Met which records changed since the last successful sync (at
/// most one object lifetime back: anything older has expired anyway), marks the cached ones
/// among them expired in both tiers, and refreshes them through the pacer, the most recently
/// used first (memory's, in its LRU order, which like eviction leaves entries of its newer half
/// where they are; then the persistent tier's). With a shared tier, the group's copies of the
/// listed records are marked expired too (a copy stored before this run began may predate the
/// change), and every other instance is told to mark its own local copies expired (as a soft
/// purge does), so that neither this refresh nor another instance serves them as fresh; the next
/// request for one that only the group holds refreshes it. Any thread; one run at a time is the
/// caller's business (`themet sync`, or the server's periodic sync).
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

    /// When the last successful sync started (seconds since 1970), or nil.
    public var lastSync: Double? { state.load() }

    /// One sync. Fails only when the Met's list could not be had (nothing is marked then).
    public func run() async -> Result<SyncReport, UpstreamError> {
        let started = time.now()
        let since = max(state.load() ?? -.infinity, started - lookBack)
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
