import MetEngine

/// Where upstream answers come from.
public enum UpstreamLocation: Sendable, Equatable {
    /// An HTTP(S) origin serving the Met's paths, without a trailing slash.
    case origin(String)
    /// A fixture directory laid out like the Met's paths, for offline use.
    case directory(String)
}

/// Everything `themet serve` can be told, in groups by what each part of the server reads. Every
/// field has a default; `parse` fills it from flags, then `THEMET_*` environment variables, then
/// the default, in that order of precedence.
public struct ServerConfiguration: Sendable, Equatable {
    /// Listening and the connections' lifetimes.
    public var http: HTTPSettings
    /// Who may do what: other origins, purges, proxies, each client's share of the upstream.
    public var access = AccessSettings()
    /// The Met: where it is, how long to wait for it and how politely to ask.
    public var upstream = UpstreamSettings()
    /// The memory and disk tiers, their freshness and the sync that keeps them current.
    public var cache: CacheSettings
    /// The pictures: the image host, its budget, the bounds on a picture, and their tiers.
    public var images = ImageSettings()
    /// The shared tier in Redis.
    public var redis = RedisSettings()
    /// Standard error's log lines and the access log.
    public var logging = LogSettings()
    /// What the widget keeps and where its links point.
    public var presentation = PresentationSettings()

    /// The rate the pacer keeps while Redis is unavailable: `redis.fallbackRate`, else a quarter of
    /// the group's rate (four instances falling back together stay within the budget).
    public var fallbackRate: Double { redis.fallbackRate ?? upstream.rate / 4 }

    /// The defaults, given the environment (for the data directory) and the core count.
    public init(environment: [String: String] = [:], processorCount: Int = 1) {
        let cacheHome =
            environment["XDG_CACHE_HOME"].flatMap { $0.isEmpty ? nil : $0 }
            ?? (environment["HOME"].flatMap { $0.isEmpty ? nil : $0 + "/.cache" } ?? ".cache")
        cache = CacheSettings(dataDirectory: cacheHome + "/themet")
        http = HTTPSettings(loops: max(1, processorCount))
    }

    /// Listening and the connections' lifetimes.
    public struct HTTPSettings: Sendable, Equatable {
        /// The address to bind. Default `127.0.0.1` (nothing exposed); `0.0.0.0` shares on a LAN.
        public var host = "127.0.0.1"
        /// The TCP port; 0 binds any free port (printed once bound). Default 8080.
        public var port = 8080
        /// libevent loops, one thread each. Default: one per core.
        public var loops: Int
        /// Seconds a connection may sit idle between requests, or a client fall silent in the
        /// middle of one (then 408), before it is closed. Default 60. `readTimeout` bounds the
        /// whole request.
        public var idleTimeout = 60.0
        /// Seconds a client has to send one whole request, head and body, from its first byte
        /// however steadily the bytes trickle in (then 408 and close). Default 10.
        public var readTimeout = 10.0
        /// The most client connections open at once (the server stops accepting at the cap and
        /// resumes when one closes). Default nil: the descriptor limit (`RLIMIT_NOFILE`) less 128,
        /// worked out when the server starts.
        public var maxConnections: Int?
        /// Seconds that in-flight requests get to finish after SIGINT/SIGTERM. Default 10.
        public var shutdownTimeout = 10.0
        /// Request size limits.
        public var limits = RequestLimits()

        public init(loops: Int) { self.loops = loops }
    }

    /// Who may do what: other origins, purges, proxies, each client's share of the upstream.
    public struct AccessSettings: Sendable, Equatable {
        /// Which other origins' pages may read the answers (`--cors-origin`). Default `*`: any.
        public var cors = CORSPolicy.any
        /// The bearer token that allows the purge routes (`DELETE /cache/…`); when set, the only
        /// way to purge, from this machine too. Default nil: only clients on this machine, straight
        /// (not through a proxy), may purge.
        public var adminToken: String?
        /// The reverse proxies whose forwarding field names the client (`--trusted-proxy`, and the
        /// field with `--forwarded-field`), for the access log, the upstream's fair shares and the
        /// purge rule. Default none: the peer is the client, and no forwarding field is believed.
        public var trustedProxies = TrustedProxies.none
        /// The most upstream fetches one client may have waiting for their turn (`--client-queue`),
        /// and the most objects of its batches and pages being fetched in the background; a request
        /// needing more is answered 429. Default 100: one whole batch or search page.
        public var clientQueue = 100

        public init() {}
    }

    /// The Met: where it is, how long to wait for it and how politely to ask.
    public struct UpstreamSettings: Sendable, Equatable {
        /// The Met's origin (the server adds `/public/collection/v1…`), or a fixture directory.
        /// Default `https://collectionapi.metmuseum.org`.
        public var location = UpstreamLocation.origin("https://collectionapi.metmuseum.org")
        /// Seconds one upstream attempt may take in all, connecting and reading the whole body
        /// included, before it gives up (504). Default 10.
        public var timeout = 10.0
        /// Seconds an upstream attempt may take to connect (TCP and TLS). Default 5.
        public var connectTimeout = 5.0
        /// The largest upstream body accepted, in bytes, both as sent on the wire and after gzip
        /// decoding; a larger answer is a 502 `upstream_malformed` and is never stored. Default
        /// 16 MiB: a Met record is a few KiB, and the largest answer, the whole `/objects` list,
        /// about 4 MiB.
        public var maxBody = 16 * 1_048_576
        /// Upstream calls started per second, on average, by the one pacer all calls share.
        /// Default 1: about one request a second is what the Met's firewall is known to let
        /// through for long runs, while two a second were blocked after about 80 requests
        /// (docs/MET-API.md §6).
        public var rate = 1.0
        /// Upstream calls that may start at once after a quiet spell (the token bucket's size).
        /// Default 3: a few misses start together, far below the ~30 quick requests that trip the
        /// firewall, while the long-run pace stays `rate`.
        public var burst = 3
        /// The most upstream calls in flight at once. Default 2: a slow answer (a large list can
        /// take seconds) does not stall every other call, while 4 concurrent calls were blocked
        /// (docs/MET-API.md §6).
        public var concurrency = 2
        /// Retries after a first upstream attempt that failed with a 5xx, no answer or a timeout
        /// (never a 4xx, a block page or a malformed body). Default 2.
        public var retries = 2
        /// Seconds one upstream fetch may take in all, pacing waits and retries included, before
        /// it fails with a timeout (504). Default 30. Each attempt is also bounded by `timeout`.
        public var requestTimeout = 30.0
        /// Seconds all upstream calls pause after the Met's firewall answers 403. Default 60. A
        /// repeat block doubles the pause, up to `UpstreamMonitor.maximumCooldown` (15 minutes).
        public var blockCooldown = 60.0
        /// Which generation of the Met's search to use. Default `auto`: v1.1, with v1 as a fallback.
        public var searchAPI = SearchAPIMode.auto
        /// Whether a search the Met cannot answer (blocked, down, unreachable, slow) is answered
        /// from this server's index of the records it holds (`source: local`) instead of a 502,
        /// 503 or 504. Default true (`--search-fallback local`).
        public var searchFallback = true

        public init() {}
    }

    /// The memory and disk tiers, their freshness and the sync that keeps them current.
    public struct CacheSettings: Sendable, Equatable {
        /// Where persistent state goes; created if missing. Default `$XDG_CACHE_HOME/themet`, else
        /// `$HOME/.cache/themet`.
        public var dataDirectory: String
        /// The memory cache's bound, in bytes. Default 256 MiB.
        public var memorySize = 256 * 1_048_576
        /// The persistent (SQLite) tier's bound, in bytes of rows; 0 turns the tier off. Default
        /// 1 GiB.
        public var diskSize = 1 << 30
        /// Freshness per kind and the stale-if-error window.
        public var freshness = FreshnessPolicy()
        /// Seconds between two `metadataDate` syncs in the server (the first one interval after the
        /// last successful one, or after start-up when there was none); 0 turns them off. Default
        /// 1 day.
        public var syncInterval: Double = 86_400

        public init(dataDirectory: String) { self.dataDirectory = dataDirectory }
    }

    /// The pictures: the image host, its budget, the bounds on a picture, and their tiers.
    public struct ImageSettings: Sendable, Equatable {
        /// The image host's origin (`--image-upstream`), or a fixture directory. Default nil: see
        /// `ServerConfiguration.imageLocation`.
        public var location: UpstreamLocation?
        /// Calls to the image host started per second, on average, by its own pacer. Default 1: the
        /// image host sits behind a firewall of its own, as quick to block as the API's
        /// (docs/MET-API.md §6), and a grid of thumbnails is exactly such a burst.
        public var rate = 1.0
        /// Calls to the image host that may start at once after a quiet spell. Default 3.
        public var burst = 3
        /// The most calls to the image host in flight at once. Default 2.
        public var concurrency = 2
        /// The largest picture accepted, in bytes, on the wire and in a file; a larger one is a 502
        /// `upstream_malformed`, never stored. Default 32 MiB: the Met's originals, capped at
        /// 4,000 px, are a few MiB.
        public var maxBytes = 32 * 1_048_576
        /// The most pixels a picture may declare in its header (checked before anything decodes
        /// it); a larger one is a 502 `upstream_malformed`. Default 50 million: a 4,000 × 4,000
        /// original has 16 million.
        public var maxPixels = 50_000_000
        /// The picture files' bound (`images/` in the data directory), in bytes, least recently used
        /// out first; 0 keeps pictures in memory only. Default 4 GiB.
        public var cacheSize = 4 << 30
        /// The bound of the pictures kept in memory, the most used ones, in bytes. Default 64 MiB.
        public var memorySize = 64 * 1_048_576
        /// The most IIIF derivations made at once, each on a thread of its own; each holds its
        /// picture's decoded pixels (up to `maxPixels` × 4 bytes). Default 2.
        public var derivations = 2

        public init() {}
    }

    /// The shared tier in Redis.
    public struct RedisSettings: Sendable, Equatable {
        /// The Redis of the shared tier (`--redis`), which several instances share: entries, single
        /// flight, purges, the upstream budget and the breaker. Default nil: no shared tier.
        public var address: RedisAddress?
        /// What every key and channel this server uses in Redis starts with. Default `themet:`.
        public var prefix = "themet:"
        /// Seconds one Redis call may take before the request carries on without it (and the
        /// connection is dropped and made again). Default 0.1.
        public var timeout = 0.1
        /// Upstream calls per second this instance starts while Redis is unavailable, when the
        /// group's budget cannot be asked; nil: a quarter of the upstream rate.
        public var fallbackRate: Double?
        /// The group's secret (`--redis-secret`, or read from `--redis-secret-file` at start-up):
        /// the key of the MAC every record and notice in Redis carries, so that only instances that
        /// know it can write what the others believe. Nil: records carry a checksum only, and the
        /// group trusts whoever can write to Redis.
        public var secret: String?
        /// A file holding the group's secret (`--redis-secret-file`), read when the server starts
        /// (a secret on the command line shows in the process list); nil for none.
        public var secretFile: String?

        public init() {}
    }

    /// Standard error's log lines and the access log.
    public struct LogSettings: Sendable, Equatable {
        /// The lowest log level written to standard error. Default `info` (includes the access log).
        public var level = LogLevel.info
        /// How log lines are written (`--log-format`): `.text` (the default) or `.json`.
        public var format = LogFormat.text
        /// Where access lines go (`--access-log`); written only at `--log-level info` or `debug`.
        public var accessLog = AccessLogDestination.standardError

        public init() {}
    }

    /// What the widget keeps and where its links point.
    public struct PresentationSettings: Sendable, Equatable {
        /// How many of the latest search results the shared store (and the widget) keeps. Default
        /// 30, the most the app kept.
        public var widgetObjects = 30
        /// Where `/open` sends public-domain objects: a path or absolute http(s) URL containing
        /// `{id}`. Default `/objects/{id}`.
        public var detailURL = "/objects/{id}"
        /// The server's public base URL (`https://met.example`), which makes the widget's
        /// `openURL`s absolute; nil keeps them relative (`/open/1`). Default none.
        public var publicURL: String?

        public init() {}
    }
}
