/// The whole server behind the `Responder` seam, assembled: the router, the route handlers and
/// the CORS layer around them, the pipeline driver, the memory tier and the tiers below it, the
/// upstream client with its one pacer and breaker. One instance serves every loop; all of its
/// state is thread-safe.
public final class MetService: Responder {
    /// The server's version, shown by `/health` and `--version`.
    public static let version = "0.1.0"

    /// The bytes of rendered search pages and timelines kept (16 MiB): a page of 100 large
    /// records is about 300 KB, so this keeps the pages and timelines in use at once.
    static let renderCacheBytes = 16 << 20
    /// The bytes of rendered batches kept (8 MiB), apart from the search pages: front ends ask
    /// for many different sets of IDs, which must not push the pages out.
    static let batchRenderBytes = 8 << 20
    /// The bytes of rendered IIIF manifests kept (4 MiB; a manifest is a few KB), apart too:
    /// without `--public-url` each `Host` makes its own.
    static let manifestRenderBytes = 4 << 20

    /// The latest search results (`objects.json`).
    public let store: SharedStore
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
    /// The counters behind `/metrics` that no component keeps itself.
    let metrics = ServerMetrics()
    let router: Router
    private let cors: CORSLayer
    private let driver: PipelineDriver
    private let fetcher: CachedFetcher
    private let presenter: Presenter
    private let search: SearchHandler
    private let widget: WidgetHandler
    private let health: HealthHandler
    private let metricsHandler: MetricsHandler
    private let synchronizer: Synchronizer
    private let warmer: Warmer
    private let purges: PurgeHandler
    private let random: RandomHandler
    private let explorer: ExplorerHandler
    /// Rendered batches, and manifests, shared until their entries change (search pages and
    /// timelines have theirs in the search and widget handlers).
    private let batchRenders: SearchHandler.Renders
    private let manifestRenders: SearchHandler.Renders
    /// `--detail-url`, for `/open`.
    private let detailURL: String
    /// `--public-url`, for the IIIF manifests' `id`s.
    private let publicURL: String?
    /// `--trusted-proxy`: whose forwarding fields tell who the client is.
    private let proxies: TrustedProxies

    /// - Parameters:
    ///   - configuration: read here only: each component gets its own settings from it.
    ///   - upstream: where misses are fetched.
    ///   - disk: the persistent tier under memory (see `PersistentTier`); nil for none.
    ///   - shared: the tier shared with other instances under that (see `SharedTier`), whose
    ///     budget and breaker the pacer and the monitor then share; nil for none.
    ///   - time: the clock for freshness, `Age`, pacing and deadlines.
    ///   - openAPI: the bytes served at `/openapi.yaml`.
    ///   - compress: gzip, to keep a compressed copy of each entry for clients that accept it;
    ///     nil serves identity bodies only.
    ///   - random: the draws of `/random`.
    public init(
        configuration: ServerConfiguration, upstream: any Upstream, disk: (any PersistentTier)? = nil,
        shared: (any SharedTier)? = nil, time: any TimeSource, logger: Logger, openAPI: [UInt8],
        compress: (@Sendable ([UInt8]) -> [UInt8])? = nil, random: any RandomSource = SystemRandomSource()
    ) {
        self.disk = disk
        self.shared = shared
        let startedAt = time.now()
        store = SharedStore(
            directory: configuration.dataDirectory, capacity: configuration.widgetObjects, logger: logger)
        cache = MemoryCache(capacity: configuration.cacheSize)
        monitor = UpstreamMonitor(blockCooldown: configuration.blockCooldown)
        let pacer = Self.pacer(for: configuration, time: time)
        self.pacer = pacer
        let client = MetClient(
            upstream: upstream, monitor: monitor, pacer: pacer,
            retryPolicy: RetryPolicy(maxAttempts: configuration.upstreamRetries + 1),
            attemptTimeout: configuration.upstreamTimeout, fetchTimeout: configuration.requestTimeout, time: time,
            logger: logger, metrics: metrics,
            group: shared.map { tier in
                (
                    tier,
                    UpstreamPacer(
                        ratePerSecond: configuration.fallbackRate, burst: 1,
                        concurrency: configuration.upstreamConcurrency, time: time)
                )
            })
        fetcher = CachedFetcher(
            client: client, cache: cache, disk: disk, shared: shared, time: time, freshness: configuration.freshness,
            compress: compress, metrics: metrics, logger: logger)
        driver = PipelineDriver(
            cache: cache, resolver: fetcher, pacer: pacer, time: time, logger: logger, metrics: metrics)
        router = Router(
            limits: configuration.limits, adminToken: configuration.adminToken, proxies: configuration.trustedProxies)
        proxies = configuration.trustedProxies
        purges = PurgeHandler(cache: cache, disk: disk, shared: shared, metrics: metrics)
        cors = CORSLayer(policy: configuration.cors)
        presenter = Presenter(time: time, monitor: monitor, clientLimit: configuration.clientQueue)
        let renders = SearchHandler.Renders(capacity: Self.renderCacheBytes, compress: compress)
        batchRenders = SearchHandler.Renders(capacity: Self.batchRenderBytes, compress: compress)
        manifestRenders = SearchHandler.Renders(capacity: Self.manifestRenderBytes, compress: compress)
        search = SearchHandler(
            mode: configuration.searchAPI, store: store, renders: renders, presenter: presenter, time: time,
            logger: logger)
        widget = WidgetHandler(search: search, publicURL: configuration.publicURL, renders: renders, time: time)
        health = HealthHandler(
            time: time, monitor: monitor, pacer: pacer, cache: cache, disk: disk, shared: shared,
            flights: fetcher.flights,
            store: store,
            upstreamLocation: upstream.location, startedAt: startedAt,
            openAPIDocument: CacheEntry(
                key: "/openapi.yaml", kind: .document, status: 200, body: openAPI, storedAt: startedAt,
                policy: FreshnessPolicy(), compress: compress))
        synchronizer = Synchronizer(
            client: client, cache: cache, disk: disk, shared: shared, fetcher: fetcher,
            state: SyncState(directory: configuration.dataDirectory, logger: logger),
            lookBack: configuration.freshness.object, time: time, logger: logger)
        warmer = Warmer(fetcher: fetcher, searchAPI: configuration.searchAPI, monitor: monitor, time: time)
        metricsHandler = MetricsHandler(
            metrics: metrics, time: time, cache: cache, disk: disk, shared: shared, flights: fetcher.flights,
            pacer: pacer,
            monitor: monitor, startedAt: startedAt)
        detailURL = configuration.detailURL
        publicURL = configuration.publicURL
        self.random = RandomHandler(search: search, random: random, publicURL: configuration.publicURL)
        explorer = ExplorerHandler(storedAt: startedAt, compress: compress)
        shared?.onEvent { [monitor, pacer, purges, logger] event in
            switch event {
            case .purged(let key):
                purges.dropLocally(key)
            case .blocked(let seconds):
                let now = time.now()
                let wasBlocked = monitor.blockedUntil(at: now) != nil
                monitor.adoptBlock(for: seconds, at: now)
                if !wasBlocked, let until = monitor.blockedUntil(at: now) {
                    logger.warning(
                        "upstream: another instance of the group was blocked by the Met's firewall; every upstream "
                            + "call paused until \(Timestamp.rfc3339(until))")
                }
                pacer.failWaiting(with: .blocked)
            }
        }
    }

    /// The pacer `configuration` asks for (`--upstream-rate`, `--upstream-burst`,
    /// `--upstream-concurrency`). A fixture directory (`--upstream DIR`) is read unpaced: pacing
    /// exists to keep the real Met's firewall quiet, and a local directory has none.
    private static func pacer(for configuration: ServerConfiguration, time: any TimeSource) -> UpstreamPacer {
        if case .directory = configuration.upstream {
            return UpstreamPacer(
                ratePerSecond: 1_000_000, burst: 1_000_000, concurrency: 64, clientLimit: configuration.clientQueue,
                time: time)
        }
        return UpstreamPacer(
            ratePerSecond: configuration.upstreamRate, burst: configuration.upstreamBurst,
            concurrency: configuration.upstreamConcurrency, clientLimit: configuration.clientQueue, time: time)
    }

    public func respond(to request: Request) -> Answer {
        let (routed, label) = router.route(request)
        let requestID = request.requestID
        let forwarded = forwardedClient(of: request)
        let claim = UpstreamClaim(client: forwarded?.fairnessKey ?? request.peer.text, priority: .foreground)
        let logged = forwarded?.address
        switch cors.wrap(answer(routed, to: request, claim: claim, forwarded: forwarded), for: request) {
        case .ready(var response):
            response.route = label
            response.clientAddress = logged
            return .ready(Problem.identified(response, requestID: requestID))
        case .suspended(let suspension):
            return .suspended(
                suspension.map { response in
                    var labelled = response
                    labelled.route = label
                    labelled.clientAddress = logged
                    return Problem.identified(labelled, requestID: requestID)
                })
        }
    }

    /// The client behind a trusted proxy that sent `request`, as its forwarding field says; nil
    /// when the peer is no trusted proxy (the peer is then the client: nothing else is read, so a
    /// forged field changes nothing) or the field named no one.
    private func forwardedClient(of request: Request) -> RequestClient? {
        guard let address = request.peer.address, proxies.trusts(address) else { return nil }
        let client = proxies.client(peer: address, fields: request.headers)
        return client.viaProxy ? client : nil
    }

    /// One `metadataDate` sync (see `Synchronizer`): the records the Met changed since the last
    /// successful one are marked expired and refreshed. Waits for the refreshes, paced. Run one at
    /// a time.
    public func sync() async -> Result<SyncReport, UpstreamError> {
        await synchronizer.run()
    }

    /// The object IDs `source` names, for `warm(_:stop:report:)`; through the cache and the pacer.
    public func warmIDs(_ source: WarmSource) async -> Result<[Int], UpstreamError> {
        await warmer.ids(of: source)
    }

    /// Fills the cache with `ids`, one at a time through the pacer, skipping what a tier holds
    /// fresh, until `stop` (asked before each) says so; `report` is told after each.
    public func warm(
        _ ids: [Int], stop: @Sendable () -> Bool, report: @Sendable (WarmProgress) -> Void
    ) async -> WarmProgress {
        await warmer.warm(ids, stop: stop, report: report)
    }

    /// When the last successful sync started (seconds since 1970), or nil. Reads `sync.json`.
    public var lastSync: Double? { synchronizer.lastSync }

    public func unread(_ response: Response, requestID: String, origin: String?) -> Response {
        Problem.identified(cors.finish(response, origin: origin), requestID: requestID)
    }

    public func finished(_ response: Response, seconds: Double) {
        metrics.observe(response.route, status: response.status, outcome: response.cacheOutcome, seconds: seconds)
    }

    /// Upstream fetches in progress, by key (for tests).
    var flights: SingleFlight<Fill> { fetcher.flights }

    /// Background fetches that pipelines started and no longer wait for (for tests).
    var backgroundFillsRunning: Int { driver.backgroundFillsRunning }

    /// Background refreshes of entries served while revalidating (for tests).
    var refreshesRunning: Int { fetcher.refreshesRunning }

    /// The handler's answer to a routed request; `claim` is whose request it is (for the pacer),
    /// `forwarded` the client behind a trusted proxy, if any.
    private func answer(
        _ routed: RoutedRequest, to request: Request, claim: UpstreamClaim, forwarded: RequestClient?
    ) -> Answer {
        switch routed {
        case .answer(let response):
            .ready(response)
        case .preflight(let methods):
            .ready(cors.preflight(request, methods: methods))
        case .health:
            .ready(health.health())
        case .metrics:
            .ready(metricsHandler.response())
        case .openAPI(let presentation):
            .ready(health.openAPI(presentation, presenter: presenter))
        case .resource(let resource, let presentation):
            driver.start(
                ResourcePipeline(resource: resource, presentation: presentation, presenter: presenter), claim: claim)
        case .search(let query, let presentation):
            driver.start(search.pipeline(query, presentation), claim: claim)
        case .widget(let request, let presentation):
            widget.answer(request, presentation, driver: driver, claim: claim)
        case .open(let id, let asJSON):
            driver.start(OpenPipeline(id: id, asJSON: asJSON, detailURL: detailURL, presenter: presenter), claim: claim)
        case .objectBatch(let batch, let presentation):
            driver.start(
                BatchPipeline(batch: batch, presentation: presentation, presenter: presenter, renders: batchRenders),
                claim: claim)
        case .random(let request):
            driver.start(random.pipeline(request), claim: claim)
        case .iiifManifest(let id, let presentation):
            driver.start(
                ManifestPipeline(
                    id: id,
                    base: ManifestPipeline.base(
                        publicURL: publicURL, scheme: forwarded?.forwardedProto ?? "http", host: request.headers["Host"]
                    ),
                    presentation: presentation, presenter: presenter, renders: manifestRenders),
                claim: claim)
        case .explorer(let asset, let presentation):
            .ready(explorer.response(asset, presentation, presenter: presenter))
        case .purge(let keys):
            purges.purge(keys)
        }
    }
}
