import MetEngine

/// What the routes answer with: the pipeline driver and the presenter, what keeps state (the search
/// generation, the shared store, kept renders, the widget, random draws, health, metrics, the
/// explorer, purges, snapshots) and the settings routes read. Made once by `MetService`; any thread.
final class RouteServices: Sendable {
    let driver: PipelineDriver
    let presenter: Presenter
    let generations: SearchGenerations
    /// The latest search results (`objects.json`).
    let store: SharedStore
    let widget: WidgetHandler
    let random: RandomHandler
    let health: HealthHandler
    let metrics: MetricsHandler
    let explorer: ExplorerHandler
    /// The pictures (`/images/…`).
    let images: ImageHandler
    /// The IIIF Image API over the pictures (`/iiif/{id}/{n}/…`).
    let iiifImages: IIIFImageHandler
    let purges: PurgeHandler
    /// `GET /cache/snapshot`.
    let snapshots: SnapshotHandler
    /// `GET /changes`.
    let changes: ChangesHandler
    /// `/search?source=local`, and the stand-in for a search of the Met that failed.
    let localSearch: LocalSearchHandler
    /// Who may purge (`--admin-token`, `--trusted-proxy`).
    let purgeRule: PurgeRule
    /// Rendered search pages (and the widget's timelines), batches, and manifests, each shared
    /// until their entries change.
    let searchRenders: Renders
    let batchRenders: Renders
    let manifestRenders: Renders
    /// `--detail-url`, for `/open`.
    let detailURL: String
    /// `--public-url`, for the IIIF manifests' `id`s.
    let publicURL: String?

    init(
        driver: PipelineDriver, presenter: Presenter, generations: SearchGenerations, store: SharedStore,
        widget: WidgetHandler, random: RandomHandler, health: HealthHandler, metrics: MetricsHandler,
        explorer: ExplorerHandler, images: ImageHandler,
        iiifImages: IIIFImageHandler, purges: PurgeHandler, snapshots: SnapshotHandler, changes: ChangesHandler,
        localSearch: LocalSearchHandler, purgeRule: PurgeRule,
        searchRenders: Renders,
        batchRenders: Renders, manifestRenders: Renders, detailURL: String, publicURL: String?
    ) {
        self.driver = driver
        self.presenter = presenter
        self.generations = generations
        self.store = store
        self.searchRenders = searchRenders
        self.widget = widget
        self.random = random
        self.health = health
        self.metrics = metrics
        self.explorer = explorer
        self.images = images
        self.iiifImages = iiifImages
        self.purges = purges
        self.snapshots = snapshots
        self.changes = changes
        self.localSearch = localSearch
        self.purgeRule = purgeRule
        self.batchRenders = batchRenders
        self.manifestRenders = manifestRenders
        self.detailURL = detailURL
        self.publicURL = publicURL
    }

    /// Runs `pipeline` for `request` (see `PipelineDriver.start`).
    func start(_ pipeline: consuming some Pipeline, for request: RouteRequest) -> Answer {
        driver.start(pipeline, claim: request.claim)
    }
}
