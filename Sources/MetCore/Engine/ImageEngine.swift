import MetEngine

/// The pictures' engine, beside the records' in `CacheEngine`: a memory tier of the most used
/// pictures, the picture files under it, the group's shared tier, and a client of the image host
/// with a pacer, breaker and group budget (`images`) of its own, so that a block of the image host
/// pauses pictures only, and the records' budget is never spent on them. One fetcher resolves
/// pictures through those tiers with the records' rules (single flight across the group,
/// stale-while-revalidate, stale-if-error, conditional revalidation). Thread-safe.
public final class ImageEngine: Sendable {
    /// The most used pictures.
    let cache: MemoryCache
    /// The picture files, when there are any: large pictures are sent from them (`ImageHandler`).
    public let files: (any FileTier)?
    /// The image host's breaker and call figures.
    let monitor: UpstreamMonitor
    /// The image host's pacer.
    let pacer: UpstreamPacer
    let fetcher: CachedFetcher<ImageResource>
    /// `--image-max-pixels` and `--image-max-bytes`.
    let maxPixels: Int
    let maxBytes: Int
    /// Where the pictures come from, for `/health`.
    let location: String
    /// The pictures' own counters (lookups in their tiers, calls to the image host), apart from the
    /// records' so that neither's figures include the other's.
    let metrics = ServerMetrics()
    /// How long each IIIF derivation took, and how many failed (`themet_image_derivation_*`).
    let derivationTime = Histogram()
    let derivationFailures = Counter()
    /// Picture responses whose body was sent from its file (`themet_image_file_bodies_total`).
    let fileBodies = Counter()
    /// Makes the IIIF derivatives (libvips in the server).
    let deriver: any ImageDeriver
    /// The lifetimes of what is stored (derivatives take a picture's).
    let freshness: FreshnessPolicy

    /// The name of the image host's budget and breaker in the shared tier.
    static let budget = "images"

    /// - Parameters:
    ///   - upstream: the image host (or a fixture directory's pictures).
    ///   - files: the pictures' persistent tier; nil keeps them in memory only.
    ///   - shared: the group's tier, whose `images` budget and breaker this engine shares.
    ///   - deriver: makes the IIIF derivatives.
    init(
        configuration: ServerConfiguration, upstream: any Upstream, files: (any FileTier)?,
        shared: (any SharedTier)?, deriver: any ImageDeriver, time: any TimeSource, logger: Logger
    ) {
        self.deriver = deriver
        let settings = configuration.images
        self.files = files
        freshness = configuration.cache.freshness
        maxPixels = settings.maxPixels
        maxBytes = settings.maxBytes
        location = upstream.location
        cache = MemoryCache(capacity: settings.memorySize)
        monitor = UpstreamMonitor(blockCooldown: configuration.upstream.blockCooldown)
        // A fixture directory is read unpaced, as the records' pacer reads one (`CacheEngine`).
        let isDirectory: Bool
        switch configuration.imageLocation {
        case .directory: isDirectory = true
        case .origin: isDirectory = false
        }
        pacer =
            isDirectory
            ? UpstreamPacer(
                ratePerSecond: 1_000_000, burst: 1_000_000, concurrency: 64,
                clientLimit: configuration.access.clientQueue, time: time)
            : UpstreamPacer(
                ratePerSecond: settings.rate, burst: settings.burst, concurrency: settings.concurrency,
                clientLimit: configuration.access.clientQueue, time: time)
        let client = MetClient(
            upstream: upstream, monitor: monitor, pacer: pacer,
            retryPolicy: RetryPolicy(maxAttempts: configuration.upstream.retries + 1),
            attemptTimeout: configuration.upstream.timeout, fetchTimeout: configuration.upstream.requestTimeout,
            time: time, logger: logger, metrics: metrics,
            group: shared.map { tier in
                (
                    tier,
                    UpstreamPacer(
                        ratePerSecond: settings.rate / 4, burst: 1, concurrency: settings.concurrency, time: time)
                )
            },
            budget: Self.budget, host: "the Met's image host")
        fetcher = CachedFetcher(
            client: client, cache: cache, disk: files, shared: shared, time: time,
            freshness: configuration.cache.freshness, compress: nil, metrics: metrics, logger: logger)
    }

    /// Bytes `range` of `entry`'s body as a body sent from the picture's file, when there are
    /// picture files: each send opens the file if they hold this very version then (counted in
    /// `fileBodies`), else sends the bytes memory holds. Captures the entry's key, ETag and body,
    /// never the entry: a kept hit response (`HitResponseTable`) would otherwise keep it alive.
    func fileBody(of entry: CacheEntry, _ range: Range<Int>) -> FileBody? {
        guard let files else { return nil }
        let key = entry.key
        let etag = entry.etag
        let fileBodies = fileBodies
        return FileBody(offset: range.lowerBound, length: range.count, whole: entry.body) {
            let file = files.openFile(key: key, etag: etag)
            if file != nil { fileBodies.add() }
            return file
        }
    }

    /// The image host's picture at `path` (an `ImagePath`'s), under this engine's bounds.
    func resource(_ path: String) -> ImageResource {
        ImageResource(path: path, maxPixels: maxPixels, maxBytes: maxBytes)
    }
}
