import MetEngine

/// The whole server behind the `Responder` seam, assembled: the route table and what its routes
/// answer with, the response layers around every answer, over the engine (`CacheEngine`: tiers,
/// upstream client, pacer, breaker, driver). One instance serves every loop; all of its state is
/// thread-safe.
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
    /// The tiers, the upstream client and the driver the routes run on.
    public let engine: CacheEngine
    let routes: RouteTable
    /// What the routes answer with.
    let services: RouteServices
    /// Every answer's layers, in order: CORS, then what `/metrics` and the access log read, then
    /// the request ID in problem documents.
    private let layers: ResponseLayers
    /// `--trusted-proxy`: whose forwarding fields tell who the client is.
    private let proxies: TrustedProxies

    /// - Parameters:
    ///   - configuration: read here only: each component gets its own settings from it.
    ///   - engine: the tiers, client and driver, made from the same configuration.
    ///   - openAPI: the bytes served at `/openapi.yaml`.
    ///   - compress: gzip, for the rendered pages' and documents' compressed copies (the engine's
    ///     entries have theirs); nil serves identity bodies only.
    ///   - random: the draws of `/random`.
    public init(
        configuration: ServerConfiguration, engine: CacheEngine, openAPI: [UInt8],
        compress: (@Sendable ([UInt8]) -> [UInt8])? = nil, random: any RandomSource = SystemRandomSource()
    ) {
        self.engine = engine
        let (cache, disk, shared, monitor, pacer) = (
            engine.cache, engine.disk, engine.shared, engine.monitor, engine.pacer
        )
        let (time, logger, metrics) = (engine.time, engine.logger, engine.metrics)
        let startedAt = time.now()
        store = SharedStore(
            directory: configuration.cache.dataDirectory, capacity: configuration.presentation.widgetObjects,
            logger: logger)
        routes = RouteTable(limits: configuration.http.limits)
        proxies = configuration.access.trustedProxies
        layers = ResponseLayers(layers: [
            CORSLayer(policy: configuration.access.cors), AccountingLayer(), RequestIDLayer(),
        ])
        let presenter = Presenter(time: time, monitor: monitor, clientLimit: configuration.access.clientQueue)
        let renders = Renders(capacity: Self.renderCacheBytes, compress: compress)
        let generations = SearchGenerations(mode: configuration.upstream.searchAPI, logger: logger)
        let health = HealthHandler(
            time: time, monitor: monitor, pacer: pacer, cache: cache, disk: disk, shared: shared,
            flights: engine.flights,
            store: store,
            upstreamLocation: engine.client.upstream.location, startedAt: startedAt, images: engine.images,
            openAPIDocument: CacheEntry(
                key: "/openapi.yaml", kind: .document, status: 200, body: openAPI, storedAt: startedAt,
                policy: FreshnessPolicy(), compress: compress))
        services = RouteServices(
            driver: engine.driver, presenter: presenter, generations: generations, store: store,
            widget: WidgetHandler(
                generations: generations, presenter: presenter, store: store,
                publicURL: configuration.presentation.publicURL,
                renders: renders, time: time),
            random: RandomHandler(
                generations: generations, presenter: presenter, random: random,
                publicURL: configuration.presentation.publicURL),
            health: health,
            metrics: MetricsHandler(
                metrics: metrics, time: time, cache: cache, disk: disk, shared: shared, flights: engine.flights,
                pacer: pacer, monitor: monitor, startedAt: startedAt, images: engine.images),
            explorer: ExplorerHandler(storedAt: startedAt, compress: compress),
            images: ImageHandler(engine: engine.images, time: time, clientLimit: configuration.access.clientQueue),
            iiifImages: IIIFImageHandler(
                engine: engine, deriver: engine.images.deriver, derivations: configuration.images.derivations,
                presenter: presenter, publicURL: configuration.presentation.publicURL, time: time,
                clientLimit: configuration.access.clientQueue),
            purges: engine.purges,
            snapshots: SnapshotHandler(
                disk: disk, directory: configuration.cache.dataDirectory, time: time, logger: logger),
            changes: ChangesHandler(disk: disk, logger: logger),
            localSearch: LocalSearchHandler(
                disk: disk, fallback: configuration.upstream.searchFallback, store: store, renders: renders,
                logger: logger),
            purgeRule: PurgeRule(
                adminToken: configuration.access.adminToken, proxies: configuration.access.trustedProxies),
            searchRenders: renders, batchRenders: Renders(capacity: Self.batchRenderBytes, compress: compress),
            manifestRenders: Renders(capacity: Self.manifestRenderBytes, compress: compress),
            detailURL: configuration.presentation.detailURL, publicURL: configuration.presentation.publicURL)
    }

    public func respond(to request: consuming Request) -> Answer {
        let forwarded = forwardedClient(of: request)
        let claim = UpstreamClaim(client: forwarded?.fairnessKey ?? request.peer.text, priority: .foreground)
        let requestID = request.requestID
        let headers = request.headers
        let (answer, label) = routes.answer(request, services: services, claim: claim, forwarded: forwarded)
        return layers.wrap(
            answer,
            ResponseContext(requestID: requestID, headers: headers, route: label, clientAddress: forwarded?.address))
    }

    /// The client behind a trusted proxy that sent `request`, as its forwarding field says; nil
    /// when the peer is no trusted proxy (the peer is then the client: nothing else is read, so a
    /// forged field changes nothing) or the field named no one.
    private func forwardedClient(of request: Request) -> RequestClient? {
        guard let address = request.peer.address, proxies.trusts(address) else { return nil }
        let client = proxies.client(peer: address, fields: request.headers)
        return client.viaProxy ? client : nil
    }

    public func unread(_ response: Response, requestID: String, origin: String?) -> Response {
        var headers = HTTPFields()
        if let origin { headers.append("Origin", origin) }
        return layers.finish(
            response, ResponseContext(requestID: requestID, headers: headers, route: .none, clientAddress: nil))
    }

    public func finished(_ response: Response, seconds: Double) {
        engine.metrics.observe(
            response.route, status: response.status, outcome: response.cacheOutcome, seconds: seconds)
    }
}
