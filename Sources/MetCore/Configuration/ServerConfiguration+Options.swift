import MetEngine

extension ServerConfiguration {
    /// Every setting, in the order `--help` and the README list them.
    public static let options: [ConfigurationOption] = [
        ConfigurationOption(
            flag: "--host", placeholder: "ADDRESS", defaultText: "127.0.0.1",
            help: "Address to listen on; 0.0.0.0 shares the server on your LAN."
        ) { configuration, value in
            guard !value.isEmpty, value.allSatisfy({ $0.isLetter || $0.isNumber || ".:-[]".contains($0) }) else {
                return "expected an IP address or host name, got '\(value)'"
            }
            configuration.http.host = value
            return nil
        },
        ConfigurationOption(
            flag: "--port", placeholder: "PORT", defaultText: "8080",
            help: "TCP port; 0 picks any free port (the bound one is printed)."
        ) { configuration, value in
            guard let port = Int(value), (0...65_535).contains(port) else {
                return "expected an integer from 0 to 65535, got '\(value)'"
            }
            configuration.http.port = port
            return nil
        },
        ConfigurationOption(
            flag: "--upstream", placeholder: "URL|DIR", defaultText: "https://collectionapi.metmuseum.org",
            help: "The Met's origin (paths /public/collection/v1… are added), or a fixture directory for offline use."
        ) { configuration, value in
            guard let location = parseUpstream(value) else {
                return "expected an http(s):// origin or a directory path, got '\(value)'"
            }
            configuration.upstream.location = location
            return nil
        },
        ConfigurationOption(
            flag: "--image-upstream", placeholder: "URL|DIR",
            defaultText: "https://images.metmuseum.org, or --upstream when it is not the Met's",
            help: "The Met's image host (paths /CRDImages/… are added), or a fixture directory; by default "
                + "--upstream's origin or directory when --upstream points elsewhere than the Met."
        ) { configuration, value in
            guard let location = parseUpstream(value) else {
                return "expected an http(s):// origin or a directory path, got '\(value)'"
            }
            configuration.images.location = location
            return nil
        },
        ConfigurationOption(
            flag: "--data-dir", placeholder: "DIR", defaultText: "$XDG_CACHE_HOME/themet or ~/.cache/themet",
            help: "Directory for persistent state; created if missing."
        ) { configuration, value in
            guard !value.isEmpty else { return "expected a directory path" }
            configuration.cache.dataDirectory = value
            return nil
        },
        ConfigurationOption(
            flag: "--loops", placeholder: "N", defaultText: "one per core",
            help: "Event loops (threads) serving HTTP."
        ) { configuration, value in
            guard let loops = Int(value), (1...64).contains(loops) else {
                return "expected an integer from 1 to 64, got '\(value)'"
            }
            configuration.http.loops = loops
            return nil
        },
        byteSizeOption(
            "--cache-size", "256MiB", "Memory cache bound: bytes, or with a K/M/G (KiB/MiB/GiB) suffix.",
            example: "512MiB"
        ) { $0.cache.memorySize = $1 },
        ConfigurationOption(
            flag: "--disk-cache-size", placeholder: "BYTES", defaultText: "1GiB",
            help: "Bound of the persistent cache (cache.sqlite in the data directory), least recently used "
                + "entries evicted first; 0 turns it off."
        ) { configuration, value in
            guard let bytes = parseByteSize(value), bytes == 0 || bytes >= 1_048_576 else {
                return "expected 0 (off) or a size of at least 1MiB such as 4GiB, got '\(value)'"
            }
            configuration.cache.diskSize = bytes
            return nil
        },
        durationOption(
            "--upstream-timeout", "10s",
            "Longest one upstream attempt may take, reading the whole body included (then 504).", range: 0.1...600
        ) {
            $0.upstream.timeout = $1
        },
        durationOption(
            "--upstream-connect-timeout", "5s", "Longest an upstream connection may take to open (TCP and TLS).",
            range: 0.1...600
        ) { $0.upstream.connectTimeout = $1 },
        byteSizeOption(
            "--upstream-max-body", "16MiB",
            "Largest upstream body accepted, on the wire and after gzip decoding (larger: 502, not stored).",
            example: "16MiB"
        ) { $0.upstream.maxBody = $1 },
        durationOption(
            "--request-timeout", "30s",
            "Longest one upstream fetch may take, pacing waits and retries included (then 504).", range: 0.1...3_600
        ) { $0.upstream.requestTimeout = $1 },
        rateOption(
            "--upstream-rate", "1",
            "Upstream requests started per second, on average; the Met's firewall blocks faster clients "
                + "(one a second runs for hundreds of requests, two a second were blocked)."
        ) { $0.upstream.rate = $1 },
        integerOption(
            "--upstream-burst", "3", "Upstream requests that may start at once after a quiet spell.", range: 1...1_000
        ) { $0.upstream.burst = $1 },
        integerOption(
            "--upstream-concurrency", "2", "Most upstream requests in flight at once.", range: 1...64
        ) { $0.upstream.concurrency = $1 },
        rateOption(
            "--image-rate", "1",
            "Calls to the image host started per second, on average: a budget and breaker of its own, "
                + "shared by a group through Redis as the API's is."
        ) { $0.images.rate = $1 },
        integerOption(
            "--image-burst", "3", "Calls to the image host that may start at once after a quiet spell.",
            range: 1...1_000
        ) { $0.images.burst = $1 },
        integerOption(
            "--image-concurrency", "2", "Most calls to the image host in flight at once.", range: 1...64
        ) { $0.images.concurrency = $1 },
        integerOption(
            "--image-derivations", "2",
            "Most IIIF derivatives made at once, each decoding a whole picture into memory.", range: 1...64
        ) { $0.images.derivations = $1 },
        byteSizeOption(
            "--image-max-bytes", "32MiB",
            "Largest picture accepted, on the wire and on disk (larger: 502, not stored).", example: "32MiB"
        ) { $0.images.maxBytes = $1 },
        integerOption(
            "--image-max-pixels", "50000000",
            "Most pixels a picture may declare in its header, checked before any decoding (more: 502, not stored).",
            range: 1...1_000_000_000
        ) { $0.images.maxPixels = $1 },
        ConfigurationOption(
            flag: "--image-cache-size", placeholder: "BYTES", defaultText: "4GiB",
            help: "Bound of the picture files (images/ in the data directory), least recently used out first; "
                + "0 keeps pictures in memory only."
        ) { configuration, value in
            guard let bytes = parseByteSize(value), bytes == 0 || bytes >= 1_048_576 else {
                return "expected 0 or a size of at least 1MiB such as 4GiB, got '\(value)'"
            }
            configuration.images.cacheSize = bytes
            return nil
        },
        byteSizeOption(
            "--image-memory-size", "64MiB", "Bound of the most used pictures kept in memory.", example: "128MiB"
        ) { $0.images.memorySize = $1 },
        integerOption(
            "--client-queue", "100",
            "Most upstream fetches one client may have waiting for their turn, and objects of its pages being "
                + "fetched (clients take turns); a request that needs more is answered 429 with Retry-After. "
                + "Cached answers are never limited.",
            range: 1...100_000
        ) { $0.access.clientQueue = $1 },
        integerOption(
            "--upstream-retries", "2",
            "Retries after a failed upstream attempt (5xx, no answer, timeout; never a 4xx or a block), "
                + "with exponential back-off and jitter.",
            range: 0...10
        ) { $0.upstream.retries = $1 },
        ConfigurationOption(
            flag: "--search-api", placeholder: "MODE", defaultText: "auto",
            help: "The Met's search generation: auto (v1.1, falling back to v1 when v1.1 is absent, and back "
                + "when v1 answers 410), v1 or v1.1."
        ) { configuration, value in
            guard let mode = SearchAPIMode(rawValue: value) else {
                return "expected auto, v1 or v1.1, got '\(value)'"
            }
            configuration.upstream.searchAPI = mode
            return nil
        },
        ConfigurationOption(
            flag: "--search-fallback", placeholder: "MODE", defaultText: "local",
            help: "What answers a search the Met cannot answer (blocked, down, unreachable, slow): local (this "
                + "server's index of the records it holds, saying source: local) or off (a 502, 503 or 504)."
        ) { configuration, value in
            switch value {
            case "local": configuration.upstream.searchFallback = true
            case "off": configuration.upstream.searchFallback = false
            default: return "expected local or off, got '\(value)'"
            }
            return nil
        },
        integerOption(
            "--widget-objects", "30",
            "How many of the latest search results the widget store keeps (the app kept 5 to 30).",
            range: 1...100
        ) { $0.presentation.widgetObjects = $1 },
        ConfigurationOption(
            flag: "--detail-url", placeholder: "TEMPLATE", defaultText: "/objects/{id}",
            help: "Where /open sends public-domain objects: a path or http(s) URL containing {id}."
        ) { configuration, value in
            guard URLTemplates.isDetailTemplate(value) else {
                return "expected a path or http(s) URL containing {id} once, such as https://app.example/objects/{id}, "
                    + "got '\(value)'"
            }
            configuration.presentation.detailURL = value
            return nil
        },
        ConfigurationOption(
            flag: "--public-url", placeholder: "URL", defaultText: "none (relative links)",
            help: "This server's public base URL, to make the widget's openURL links absolute."
        ) { configuration, value in
            guard let base = URLTemplates.publicBase(value) else {
                return "expected an http(s) URL such as https://met.example, got '\(value)'"
            }
            configuration.presentation.publicURL = base
            return nil
        },
        durationOption(
            "--idle-timeout", "60s",
            "Idle keep-alive connections are closed after this; a client slower to send its request gets a 408.",
            range: 1...3_600
        ) { $0.http.idleTimeout = $1 },
        durationOption(
            "--read-timeout", "10s",
            "A client gets this long from a request's first byte to send all of it (then 408), however slowly "
                + "it trickles.",
            range: 0.1...3_600
        ) { $0.http.readTimeout = $1 },
        integerOption(
            "--max-connections", "descriptor limit - 128",
            "Most client connections open at once; at the cap new ones wait until one closes.",
            range: 1...1_048_576
        ) { $0.http.maxConnections = $1 },
        durationOption(
            "--shutdown-timeout", "10s", "Time in-flight requests get to finish on SIGINT/SIGTERM.",
            range: 0...600
        ) { $0.http.shutdownTimeout = $1 },
        ConfigurationOption(
            flag: "--cors-origin", placeholder: "ORIGINS", defaultText: "*",
            help: "Which other sites' pages may read the answers: * (any), or origins separated by commas "
                + "(https://app.example,http://localhost:5173), each echoed to requests from it with Vary: Origin."
        ) { configuration, value in
            switch CORSPolicy.parse(value) {
            case .success(let policy):
                configuration.access.cors = policy
                return nil
            case .failure(let error):
                return error.reason
            }
        },
        ConfigurationOption(
            flag: "--admin-token", placeholder: "TOKEN", defaultText: "none (clients on this machine only)",
            help: "Purging (DELETE /cache/...) then needs Authorization: Bearer TOKEN, from anywhere, this "
                + "machine included; 16 to 256 visible ASCII characters."
        ) { configuration, value in
            if let reason = secretProblem(value) { return reason }
            configuration.access.adminToken = value
            return nil
        },
        ConfigurationOption(
            flag: "--trusted-proxy", placeholder: "CIDR,...", defaultText: "none",
            help: "Reverse proxies whose forwarding field names the client (for the access log, fair shares "
                + "of the upstream and the purge rule): addresses or blocks separated by commas "
                + "(127.0.0.1,10.0.0.0/8,::1). From any other peer the field is ignored."
        ) { configuration, value in
            switch TrustedProxies.parse(value, field: configuration.access.trustedProxies.field) {
            case .success(let proxies):
                configuration.access.trustedProxies = proxies
                return nil
            case .failure(let error):
                return error.reason
            }
        },
        ConfigurationOption(
            flag: "--forwarded-field", placeholder: "FIELD", defaultText: "x-forwarded-for",
            help: "The field the trusted proxies write the client into: x-forwarded-for (nginx, Caddy; "
                + "with X-Forwarded-Proto) or forwarded (RFC 7239). Only that one is read: a proxy passes the "
                + "other on as the client sent it."
        ) { configuration, value in
            guard let field = ForwardingField(rawValue: value.lowercased()) else {
                return "expected x-forwarded-for or forwarded, got '\(value)'"
            }
            configuration.access.trustedProxies.field = field
            return nil
        },
        ConfigurationOption(
            flag: "--redis", placeholder: "URL", defaultText: "none",
            help: "Redis shared by several instances (one cache, one upstream budget, one breaker): "
                + "redis://[user:password@]host[:port][/db] or unix:///path[?db=N]."
        ) { configuration, value in
            guard let address = RedisAddress(value) else {
                return "expected redis://[user:password@]host[:port][/db] or unix:///path, got '\(value)'"
            }
            configuration.redis.address = address
            return nil
        },
        ConfigurationOption(
            flag: "--redis-prefix", placeholder: "PREFIX", defaultText: "themet:",
            help: "What every Redis key and channel of this group starts with; groups sharing a Redis differ in it."
        ) { configuration, value in
            guard (1...64).contains(value.utf8.count), value.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
                return "expected 1 to 64 visible ASCII characters, got '\(value)'"
            }
            configuration.redis.prefix = value
            return nil
        },
        durationOption(
            "--redis-timeout", "100ms",
            "Longest a request waits for one Redis call before carrying on without Redis (which is then "
                + "reconnected).",
            range: 0.001...10
        ) { $0.redis.timeout = $1 },
        rateOption(
            "--redis-fallback-rate", "a quarter of --upstream-rate",
            "Upstream requests per second this instance starts while Redis is unavailable."
        ) { $0.redis.fallbackRate = $1 },
        ConfigurationOption(
            flag: "--redis-secret", placeholder: "SECRET", defaultText: "none (Redis writers are trusted)",
            help: "The group's secret: every record and notice in Redis is signed with it (HMAC-SHA256) and "
                + "one without a valid signature is refused; 16 to 256 visible ASCII characters, the same on "
                + "every instance."
        ) { configuration, value in
            if let reason = secretProblem(value) { return reason }
            configuration.redis.secret = value
            return nil
        },
        ConfigurationOption(
            flag: "--redis-secret-file", placeholder: "PATH", defaultText: "none",
            help: "A file holding the group's secret (as --redis-secret; one trailing newline ignored), read "
                + "at start-up, so that the secret stays out of the process list."
        ) { configuration, value in
            guard !value.isEmpty else { return "expected a file path" }
            configuration.redis.secretFile = value
            return nil
        },
        ConfigurationOption(
            flag: "--log-level", placeholder: "LEVEL", defaultText: "info",
            help: "debug, info (includes the access log), warning or error."
        ) { configuration, value in
            guard let level = LogLevel(name: value) else {
                return "expected debug, info, warning or error, got '\(value)'"
            }
            configuration.logging.level = level
            return nil
        },
        ConfigurationOption(
            flag: "--log-format", placeholder: "FORMAT", defaultText: "text",
            help: "text (a time, the level, the message) or json (one object a line), for every log line "
                + "and the access log."
        ) { configuration, value in
            guard let format = LogFormat(rawValue: value.lowercased()), format != .bare else {
                return "expected text or json, got '\(value)'"
            }
            configuration.logging.format = format
            return nil
        },
        ConfigurationOption(
            flag: "--access-log", placeholder: "PATH|-|off", defaultText: "-",
            help: "Where the access log goes (one line a request, at --log-level info): - for standard error, "
                + "a file to append to, or off."
        ) { configuration, value in
            switch value {
            case "": return "expected -, off or a file path"
            case "-": configuration.logging.accessLog = .standardError
            case "off": configuration.logging.accessLog = .off
            default: configuration.logging.accessLog = .file(value)
            }
            return nil
        },
        durationOption(
            "--object-ttl", "30d",
            "How long an object record stays fresh (metadataDate sync marks changed ones expired sooner).",
            range: 0...31_536_000
        ) { $0.cache.freshness.object = $1 },
        durationOption("--list-ttl", "1h", "How long an object ID list stays fresh.", range: 0...31_536_000) {
            $0.cache.freshness.objectList = $1
        },
        durationOption(
            "--search-ttl", "1h", "How long an upstream search answer (an ID list) stays fresh.",
            range: 0...31_536_000
        ) { $0.cache.freshness.search = $1 },
        durationOption("--departments-ttl", "7d", "How long the department list stays fresh.", range: 0...31_536_000) {
            $0.cache.freshness.departments = $1
        },
        durationOption(
            "--not-found-ttl", "1h", "How long a Met 404 is remembered (negative caching).",
            range: 0...31_536_000
        ) { $0.cache.freshness.notFound = $1 },
        durationOption(
            "--stale-if-error", "7d", "How long past freshness an entry may stand in for a failed upstream.",
            range: 0...31_536_000
        ) { $0.cache.freshness.staleIfError = $1 },
        durationOption(
            "--stale-while-revalidate", "1d",
            "How long past freshness an entry is still served at once while one background request refreshes it.",
            range: 0...31_536_000
        ) { $0.cache.freshness.staleWhileRevalidate = $1 },
        durationOption(
            "--sync-interval", "24h",
            "How often the server asks the Met which records changed (metadataDate) and refreshes the cached ones; "
                + "0 turns it off.",
            range: 0...31_536_000
        ) { $0.cache.syncInterval = $1 },
        durationOption(
            "--block-cooldown", "60s",
            "Pause for all upstream calls after the Met's firewall answers 403; doubled on a repeat block, up to 15m.",
            range: 1...86_400
        ) { $0.upstream.blockCooldown = $1 },
        sizeOption("--max-uri-length", "8KiB", "Longest request target (414 beyond).", range: 256...1_048_576) {
            $0.http.limits.maxURILength = $1
        },
        sizeOption(
            "--max-header-size", "16KiB", "Most bytes of request header fields (431 beyond).",
            range: 1_024...1_048_576
        ) { $0.http.limits.maxHeaderBytes = $1 },
        sizeOption("--max-body-size", "64KiB", "Largest request body (413 beyond).", range: 0...16_777_216) {
            $0.http.limits.maxBodyBytes = $1
        },
    ]

    /// A rate of upstream requests per second, 0.01 to 10000.
    private static func rateOption(
        _ flag: String, _ defaultText: String, _ help: String,
        set: @escaping @Sendable (inout ServerConfiguration, Double) -> Void
    ) -> ConfigurationOption {
        ConfigurationOption(flag: flag, placeholder: "PER_SECOND", defaultText: defaultText, help: help) {
            configuration, value in
            guard let rate = Double(value), rate.isFinite, (0.01...10_000).contains(rate) else {
                return "expected requests per second from 0.01 to 10000, got '\(value)'"
            }
            set(&configuration, rate)
            return nil
        }
    }

    private static func durationOption(
        _ flag: String, _ defaultText: String, _ help: String, range: ClosedRange<Double>,
        set: @escaping @Sendable (inout ServerConfiguration, Double) -> Void
    ) -> ConfigurationOption {
        ConfigurationOption(flag: flag, placeholder: "DURATION", defaultText: defaultText, help: help) {
            configuration, value in
            guard let seconds = parseDuration(value), range.contains(seconds) else {
                return "expected a duration from \(format(range.lowerBound)) to \(format(range.upperBound)) "
                    + "seconds (such as 30, 250ms, 5m, 2h, 7d), got '\(value)'"
            }
            set(&configuration, seconds)
            return nil
        }
    }

    /// A size of at least 64 KiB: bytes, or with a K/M/G (KiB/MiB/GiB) suffix.
    private static func byteSizeOption(
        _ flag: String, _ defaultText: String, _ help: String, example: String,
        set: @escaping @Sendable (inout ServerConfiguration, Int) -> Void
    ) -> ConfigurationOption {
        ConfigurationOption(flag: flag, placeholder: "BYTES", defaultText: defaultText, help: help) {
            configuration, value in
            guard let bytes = parseByteSize(value), bytes >= 65_536 else {
                return "expected a size of at least 64KiB such as \(example), got '\(value)'"
            }
            set(&configuration, bytes)
            return nil
        }
    }

    private static func integerOption(
        _ flag: String, _ defaultText: String, _ help: String, range: ClosedRange<Int>,
        set: @escaping @Sendable (inout ServerConfiguration, Int) -> Void
    ) -> ConfigurationOption {
        ConfigurationOption(flag: flag, placeholder: "N", defaultText: defaultText, help: help) {
            configuration, value in
            guard let number = Int(value), range.contains(number) else {
                return "expected an integer from \(range.lowerBound) to \(range.upperBound), got '\(value)'"
            }
            set(&configuration, number)
            return nil
        }
    }

    private static func sizeOption(
        _ flag: String, _ defaultText: String, _ help: String, range: ClosedRange<Int>,
        set: @escaping @Sendable (inout ServerConfiguration, Int) -> Void
    ) -> ConfigurationOption {
        ConfigurationOption(flag: flag, placeholder: "BYTES", defaultText: defaultText, help: help) {
            configuration, value in
            guard let bytes = parseByteSize(value), range.contains(bytes) else {
                return "expected a size from \(range.lowerBound) to \(range.upperBound) bytes, got '\(value)'"
            }
            set(&configuration, bytes)
            return nil
        }
    }

    private static func format(_ seconds: Double) -> String {
        seconds == seconds.rounded() ? String(Int(seconds)) : String(seconds)
    }
}
