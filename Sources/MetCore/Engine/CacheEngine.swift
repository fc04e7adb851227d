import MetEngine

/// The engine under every route and every command: the memory tier and the tiers below it, the
/// upstream client with its one pacer and breaker, the fetcher that resolves keys through the tiers
/// with single flight, and the pipeline driver. It knows no route: the service's routes, and
/// `themet warm` and `themet sync`, all use one instance. Thread-safe.
public final class CacheEngine: Sendable {
    /// The memory tier.
    let cache: MemoryCache
    /// The persistent tier, when there is one.
    public let disk: (any PersistentTier)?
    /// The tier shared with other instances (Redis), when there is one.
    let shared: (any SharedTier)?
    /// The breaker and the upstream's call figures.
    let monitor: UpstreamMonitor
    /// The one pacer of upstream calls.
    let pacer: UpstreamPacer
    let client: MetClient
    let fetcher: CachedFetcher<MetResource>
    let driver: PipelineDriver
    /// The pictures' engine: tiers, client and budget of their own.
    public let images: ImageEngine
    /// Removes keys from every tier.
    let purges: PurgeHandler
    /// The counters behind `/metrics` that no component keeps itself.
    let metrics = ServerMetrics(routes: MetricRoute.all)
    let time: any TimeSource
    let logger: Logger

    /// - Parameters:
    ///   - configuration: read here only: each component gets its own settings from it.
    ///   - upstream: where misses are fetched.
    ///   - imageUpstream: where pictures are fetched; nil: `upstream` serves them too (a fixture
    ///     directory, the tests' fake).
    ///   - imageFiles: the pictures' persistent tier; nil keeps them in memory only.
    ///   - deriver: makes the IIIF Image API's derivatives (`MetImaging.VipsDeriver`).
    ///   - disk: the persistent tier under memory (see `PersistentTier`); nil for none.
    ///   - shared: the tier shared with other instances under that (see `SharedTier`), whose
    ///     budget and breaker the pacer and the monitor then share; nil for none.
    ///   - time: the clock for freshness, `Age`, pacing and deadlines.
    ///   - compress: gzip, to keep a compressed copy of each entry for clients that accept it;
    ///     nil keeps identity bodies only.
    public init(
        configuration: ServerConfiguration, upstream: any Upstream, disk: (any PersistentTier)? = nil,
        shared: (any SharedTier)? = nil, imageUpstream: (any Upstream)? = nil, imageFiles: (any FileTier)? = nil,
        deriver: any ImageDeriver, time: any TimeSource, logger: Logger,
        compress: (@Sendable ([UInt8]) -> [UInt8])? = nil
    ) {
        self.disk = disk
        self.shared = shared
        self.time = time
        self.logger = logger
        cache = MemoryCache(capacity: configuration.cache.memorySize)
        monitor = UpstreamMonitor(blockCooldown: configuration.upstream.blockCooldown)
        pacer = Self.pacer(for: configuration, time: time)
        client = MetClient(
            upstream: upstream, monitor: monitor, pacer: pacer,
            retryPolicy: RetryPolicy(maxAttempts: configuration.upstream.retries + 1),
            attemptTimeout: configuration.upstream.timeout, fetchTimeout: configuration.upstream.requestTimeout,
            time: time,
            logger: logger, metrics: metrics,
            group: shared.map { tier in
                (
                    tier,
                    UpstreamPacer(
                        ratePerSecond: configuration.fallbackRate, burst: 1,
                        concurrency: configuration.upstream.concurrency, time: time)
                )
            })
        fetcher = CachedFetcher(
            client: client, cache: cache, disk: disk, shared: shared, time: time,
            freshness: configuration.cache.freshness,
            compress: compress, metrics: metrics, logger: logger)
        driver = PipelineDriver(
            cache: cache, resolver: fetcher, pacer: pacer, time: time, logger: logger, metrics: metrics)
        purges = PurgeHandler(cache: cache, disk: disk, shared: shared, metrics: metrics, time: time)
        images = ImageEngine(
            configuration: configuration, upstream: imageUpstream ?? upstream, files: imageFiles, shared: shared,
            deriver: deriver, time: time, logger: logger)
        // What the group's other instances announce: a purge, an expiry, a firewall block.
        shared?.onEvent { [monitor, pacer, purges, logger, client, images] event in
            switch event {
            case .purged(let key):
                purges.dropLocally(key)
            case .expired(let key):
                purges.expireLocallySoon(key, at: time.now())
            case .blocked(let seconds, let budget) where budget == ImageEngine.budget:
                Self.adoptBlock(
                    for: seconds, monitor: images.monitor, pacer: images.pacer, at: time.now(), logger: logger,
                    paused: "the image host's firewall; pictures")
            case .blocked(let seconds, let budget):
                guard budget == client.budget else { return }
                Self.adoptBlock(
                    for: seconds, monitor: monitor, pacer: pacer, at: time.now(), logger: logger,
                    paused: "the Met's firewall; every upstream call")
            }
        }
    }

    /// A block another instance of the group announced for one host: its breaker opens (the log
    /// says so once, `paused` naming the firewall and what waits), and the calls waiting for it fail.
    private static func adoptBlock(
        for seconds: Double, monitor: UpstreamMonitor, pacer: UpstreamPacer, at now: Double, logger: Logger,
        paused: String
    ) {
        let wasBlocked = monitor.blockedUntil(at: now) != nil
        monitor.adoptBlock(for: seconds, at: now)
        if !wasBlocked, let until = monitor.blockedUntil(at: now) {
            logger.warning(
                "upstream: another instance of the group was blocked by \(paused) paused until "
                    + Timestamp.rfc3339(until))
        }
        pacer.failWaiting(with: .blocked)
    }

    /// The pacer `configuration` asks for (`--upstream-rate`, `--upstream-burst`,
    /// `--upstream-concurrency`). A fixture directory (`--upstream DIR`) is read unpaced: pacing
    /// exists to keep the real Met's firewall quiet, and a local directory has none.
    private static func pacer(for configuration: ServerConfiguration, time: any TimeSource) -> UpstreamPacer {
        if case .directory = configuration.upstream.location {
            return UpstreamPacer(
                ratePerSecond: 1_000_000, burst: 1_000_000, concurrency: 64,
                clientLimit: configuration.access.clientQueue,
                time: time)
        }
        return UpstreamPacer(
            ratePerSecond: configuration.upstream.rate, burst: configuration.upstream.burst,
            concurrency: configuration.upstream.concurrency, clientLimit: configuration.access.clientQueue, time: time)
    }

    /// Upstream fetches in progress, by key (for tests).
    var flights: SingleFlight<Fill> { fetcher.flights }

    /// Background fetches that pipelines started and no longer wait for (for tests).
    var backgroundFillsRunning: Int { driver.backgroundFillsRunning }

    /// Background refreshes of entries served while revalidating (for tests).
    var refreshesRunning: Int { fetcher.refreshesRunning }
}
