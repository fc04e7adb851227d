import Foundation
import MetEngine

/// `GET /metrics`: the Prometheus text exposition format 0.0.4, rendered when scraped from the
/// counters of `ServerMetrics` and the figures the cache, the persistent and shared tiers, the
/// single flight, the pacer and the breaker keep. Names follow Prometheus's conventions (`themet_` prefix, base
/// units, `_total` counters); labels take fixed values only (no IDs, no URLs). Any thread.
struct MetricsHandler: Sendable {
    let metrics: ServerMetrics
    let time: any TimeSource
    let cache: MemoryCache
    let disk: (any PersistentTier)?
    let shared: (any SharedTier)?
    let flights: SingleFlight<Fill>
    let pacer: UpstreamPacer
    let monitor: UpstreamMonitor
    /// When the server started, seconds since 1970.
    let startedAt: Double
    /// The pictures' engine, whose figures are shown apart (`themet_image_*`).
    let images: ImageEngine

    /// The exposition format's media type.
    static let contentType = "text/plain; version=0.0.4; charset=utf-8"

    func response() -> Response {
        var text = MetricsText()
        requests(&text)
        cacheTiers(&text)
        upstream(&text)
        pictures(&text)
        if let shared { Self.sharedTier(shared.status, &text) }
        text.family("themet_build_info", "gauge", "The server's version, as a label; always 1.")
        text.sample("themet_build_info", ["version": MetService.version], 1)
        text.family("themet_start_time_seconds", "gauge", "When the server started, in seconds since 1970.")
        text.sample("themet_start_time_seconds", [:], startedAt)
        return Response(
            status: 200, headers: ["Content-Type": Self.contentType, "Cache-Control": "no-store"], body: text.bytes)
    }

    private func requests(_ text: inout MetricsText) {
        text.family("themet_requests_total", "counter", "HTTP requests answered, by route and status class.")
        for route in MetricRoute.all {
            for statusClass in 1...5 {
                text.sample(
                    "themet_requests_total", ["route": route.name, "status": "\(statusClass)xx"],
                    Double(metrics.requestCount(route, statusClass: statusClass)))
            }
        }
        text.family(
            "themet_request_duration_seconds", "histogram",
            "Time from a request read to its response written, by route and cache outcome.")
        for route in MetricRoute.all {
            for outcome in ServerMetrics.outcomes {
                let snapshot = metrics.duration(route, outcome)
                guard snapshot.count > 0 else { continue }
                text.histogram(
                    "themet_request_duration_seconds", ["route": route.name, "cache": Self.label(outcome)], snapshot)
            }
        }
    }

    private func cacheTiers(_ text: inout MetricsText) {
        let memory = cache.statistics
        let persistent = disk?.statistics
        text.family(
            "themet_cache_entries", "gauge", "Entries each tier holds (the disk's once counted after start-up).")
        text.sample("themet_cache_entries", ["tier": "memory"], Double(memory.entries))
        if let entries = persistent?.entries { text.sample("themet_cache_entries", ["tier": "disk"], Double(entries)) }
        text.family("themet_cache_bytes", "gauge", "Bytes each tier's entries take against its bound.")
        text.sample("themet_cache_bytes", ["tier": "memory"], Double(memory.bytes))
        if let bytes = persistent?.bytes { text.sample("themet_cache_bytes", ["tier": "disk"], Double(bytes)) }
        text.family("themet_cache_capacity_bytes", "gauge", "Each tier's bound (--cache-size, --disk-cache-size).")
        text.sample("themet_cache_capacity_bytes", ["tier": "memory"], Double(memory.capacity))
        if let persistent { text.sample("themet_cache_capacity_bytes", ["tier": "disk"], Double(persistent.capacity)) }

        text.family("themet_cache_lookups_total", "counter", "Lookups in each tier, by what they found.")
        for tier in MetricTier.allCases
        where tier == .memory || (tier == .disk && persistent != nil) || (tier == .redis && shared != nil) {
            for result in LookupResult.allCases {
                text.sample(
                    "themet_cache_lookups_total", ["tier": tier.name, "result": result.name],
                    Double(metrics.lookupCount(tier, result)))
            }
        }
        text.family(
            "themet_cache_evictions_total", "counter",
            "Entries removed from each tier: to stay within its bound, by a purge, or (disk) as a damaged row.")
        text.sample("themet_cache_evictions_total", ["tier": "memory", "reason": "capacity"], Double(memory.evictions))
        text.sample(
            "themet_cache_evictions_total", ["tier": "memory", "reason": "purge"], Double(metrics.purgedCount(.memory)))
        if let persistent {
            text.sample(
                "themet_cache_evictions_total", ["tier": "disk", "reason": "capacity"], Double(persistent.evictions))
            text.sample(
                "themet_cache_evictions_total", ["tier": "disk", "reason": "purge"], Double(metrics.purgedCount(.disk)))
            text.sample(
                "themet_cache_evictions_total", ["tier": "disk", "reason": "corrupt"], Double(persistent.corrupt))
            text.family("themet_disk_errors_total", "counter", "Reads and writes of the persistent tier that failed.")
            text.sample("themet_disk_errors_total", ["operation": "read"], Double(persistent.readErrors))
            text.sample("themet_disk_errors_total", ["operation": "write"], Double(persistent.writeErrors))
            text.family("themet_disk_queued", "gauge", "Keys whose latest store or removal is not yet on the disk.")
            text.sample("themet_disk_queued", [:], Double(persistent.queued))
        }
        text.family(
            "themet_coalesced_requests_total", "counter",
            "Requests that joined another request's upstream fetch instead of making their own.")
        text.sample("themet_coalesced_requests_total", [:], Double(memory.collapsed))
        text.family(
            "themet_stale_responses_total", "counter",
            "Responses served from an expired entry: while it was refreshed, or because the upstream failed.")
        text.sample("themet_stale_responses_total", ["reason": "revalidating"], Double(memory.revalidating))
        text.sample("themet_stale_responses_total", ["reason": "upstream_failed"], Double(memory.staleServed))
    }

    private func upstream(_ text: inout MetricsText) {
        text.family("themet_upstream_requests_total", "counter", "Upstream attempts, by endpoint and outcome.")
        for (endpoint, kind) in ServerMetrics.endpoints.enumerated() {
            for (index, outcome) in UpstreamOutcome.allCases.enumerated() {
                // The image host's calls are counted by the pictures' engine.
                let source = kind == .image ? images.metrics : metrics
                text.sample(
                    "themet_upstream_requests_total", ["endpoint": Self.label(kind), "outcome": outcome.rawValue],
                    Double(source.upstreamCount(endpoint, index)))
            }
        }
        text.family(
            "themet_upstream_request_duration_seconds", "histogram", "Time one upstream attempt took, by endpoint.")
        for (endpoint, kind) in ServerMetrics.endpoints.enumerated() {
            let snapshot = (kind == .image ? images.metrics : metrics).upstreamDuration(endpoint)
            guard snapshot.count > 0 else { continue }
            text.histogram("themet_upstream_request_duration_seconds", ["endpoint": Self.label(kind)], snapshot)
        }
        text.family("themet_upstream_fetches_in_flight", "gauge", "Keys being fetched (single flights running).")
        text.sample("themet_upstream_fetches_in_flight", [:], Double(flights.inFlight))
        let figures = pacer.figures
        text.family("themet_pacer_waiting", "gauge", "Upstream calls queued in the pacer now.")
        text.sample("themet_pacer_waiting", [:], Double(figures.waiting))
        text.family("themet_pacer_waits_total", "counter", "Upstream calls that had to queue for a token or a slot.")
        text.sample("themet_pacer_waits_total", [:], Double(pacer.waits))
        text.family(
            "themet_upstream_queue", "gauge",
            "Upstream calls waiting for their turn, by class: foreground (a request waits for it) or background.")
        text.sample("themet_upstream_queue", ["class": "foreground"], Double(figures.waitingInForeground))
        text.sample("themet_upstream_queue", ["class": "background"], Double(figures.waitingInBackground))
        text.family("themet_upstream_queue_clients", "gauge", "Clients with at least one upstream call waiting.")
        text.sample("themet_upstream_queue_clients", [:], Double(figures.clientsWaiting))
        text.family(
            "themet_upstream_refused_total", "counter",
            "Upstream calls refused (429) because every client that needed them had --client-queue calls waiting.")
        text.sample("themet_upstream_refused_total", [:], Double(figures.refused))
        let state = monitor.state(at: time.now())
        text.family(
            "themet_breaker_state", "gauge", "The firewall breaker's state: 1 for the current one, 0 for the others.")
        for name in ["ok", "blocked", "unreachable"] {
            text.sample("themet_breaker_state", ["state": name], state.name == name ? 1 : 0)
        }
        text.family("themet_breaker_trips_total", "counter", "Firewall blocks that paused every upstream call.")
        text.sample("themet_breaker_trips_total", [:], Double(monitor.trips))
    }

    /// The pictures' tiers, responses and breaker (their upstream calls are in
    /// `themet_upstream_requests_total{endpoint="image"}`).
    private func pictures(_ text: inout MetricsText) {
        let memory = images.cache.statistics
        let files = images.files?.statistics
        text.family("themet_image_entries", "gauge", "Pictures each picture tier holds.")
        text.sample("themet_image_entries", ["tier": "memory"], Double(memory.entries))
        if let entries = files?.entries { text.sample("themet_image_entries", ["tier": "files"], Double(entries)) }
        text.family("themet_image_bytes", "gauge", "Bytes of the pictures each picture tier holds.")
        text.sample("themet_image_bytes", ["tier": "memory"], Double(memory.bytes))
        if let bytes = files?.bytes { text.sample("themet_image_bytes", ["tier": "files"], Double(bytes)) }
        text.family(
            "themet_image_capacity_bytes", "gauge",
            "Each picture tier's bound (--image-memory-size, --image-cache-size).")
        text.sample("themet_image_capacity_bytes", ["tier": "memory"], Double(memory.capacity))
        if let files { text.sample("themet_image_capacity_bytes", ["tier": "files"], Double(files.capacity)) }
        text.family(
            "themet_image_responses_total", "counter",
            "Pictures answered, by where they came from (hit: memory, disk_hit: the files, redis_hit: the group).")
        let outcomes: [(String, Int)] = [
            ("hit", memory.hits), ("disk_hit", memory.diskHits), ("redis_hit", memory.sharedHits),
            ("miss", memory.misses), ("collapsed", memory.collapsed), ("revalidating", memory.revalidating),
            ("stale", memory.staleServed),
        ]
        for (name, count) in outcomes { text.sample("themet_image_responses_total", ["cache": name], Double(count)) }
        if let files {
            text.family(
                "themet_image_files_damaged_total", "counter",
                "Picture files whose length or hash no longer matched their index row: a miss, never an answer.")
            text.sample("themet_image_files_damaged_total", [:], Double(files.corrupt))
            text.family("themet_image_files_errors_total", "counter", "Picture file reads and writes that failed.")
            text.sample("themet_image_files_errors_total", ["operation": "read"], Double(files.readErrors))
            text.sample("themet_image_files_errors_total", ["operation": "write"], Double(files.writeErrors))
            text.family(
                "themet_image_files_evictions_total", "counter", "Picture files removed to stay within the bound.")
            text.sample("themet_image_files_evictions_total", [:], Double(files.evictions))
            text.family(
                "themet_image_file_bodies_total", "counter",
                "Picture responses sent from their files with sendfile, never copied through this process.")
            text.sample("themet_image_file_bodies_total", [:], Double(images.fileBodies.value))
        }
        text.family("themet_image_fetches_in_flight", "gauge", "Pictures being fetched (single flights running).")
        text.sample("themet_image_fetches_in_flight", [:], Double(images.fetcher.flights.inFlight))
        let state = images.monitor.state(at: time.now())
        text.family(
            "themet_image_breaker_state", "gauge",
            "The image host's firewall breaker: 1 for the current state, 0 for the others.")
        for name in ["ok", "blocked", "unreachable"] {
            text.sample("themet_image_breaker_state", ["state": name], state.name == name ? 1 : 0)
        }
        text.family("themet_image_breaker_trips_total", "counter", "Image host blocks that paused every picture fetch.")
        text.sample("themet_image_breaker_trips_total", [:], Double(images.monitor.trips))
        text.family(
            "themet_image_derivation_duration_seconds", "histogram",
            "Time each IIIF derivative took to make (decode, cut, scale, turn, encode).")
        text.histogram("themet_image_derivation_duration_seconds", [:], images.derivationTime.snapshot)
        text.family(
            "themet_image_derivation_failures_total", "counter", "IIIF derivatives libvips could not make (502).")
        text.sample("themet_image_derivation_failures_total", [:], Double(images.derivationFailures.value))
    }

    private static func sharedTier(_ status: SharedTierStatus, _ text: inout MetricsText) {
        text.family("themet_redis_up", "gauge", "1 while the shared tier (Redis) is connected and answering.")
        text.sample("themet_redis_up", [:], status.connected ? 1 : 0)
        if let roundTrip = status.roundTrip {
            text.family("themet_redis_round_trip_seconds", "gauge", "The latest measured round trip to Redis.")
            text.sample("themet_redis_round_trip_seconds", [:], roundTrip)
        }
        text.family(
            "themet_redis_unavailable_total", "counter",
            "Redis calls that found it down or got no answer in time (the server carried on without it).")
        text.sample("themet_redis_unavailable_total", [:], Double(status.unavailable))
        text.family("themet_redis_disconnects_total", "counter", "Times the connection to Redis was lost.")
        text.sample("themet_redis_disconnects_total", [:], Double(status.disconnects))
        text.family(
            "themet_redis_signed", "gauge",
            "1 when what the group writes to Redis is signed with its secret; 0: whoever can write to Redis is trusted."
        )
        text.sample("themet_redis_signed", [:], status.signed ? 1 : 0)
        text.family(
            "themet_redis_refused_total", "counter",
            "Records and notices read from Redis and refused: a bad signature, another key's record, damage or "
                + "another version.")
        text.sample("themet_redis_refused_total", [:], Double(status.refused))
    }

    /// A cache outcome as a label value.
    static func label(_ outcome: CacheOutcome) -> String {
        switch outcome {
        case .none: "none"
        case .hit: "hit"
        case .diskHit: "disk_hit"
        case .sharedHit: "redis_hit"
        case .miss: "miss"
        case .collapsed: "collapsed"
        case .revalidating: "revalidating"
        case .stale: "stale"
        }
    }

    /// An upstream endpoint as a label value.
    static func label(_ kind: ResourceKind) -> String {
        switch kind {
        case .object: "object"
        case .objectList: "object_list"
        case .departments: "departments"
        case .search: "search"
        case .image: "image"
        case .document: "document"
        }
    }
}

/// Lines of the text exposition format, in order.
struct MetricsText {
    private(set) var bytes: [UInt8] = []

    /// `# HELP` and `# TYPE` of a family, before its samples.
    mutating func family(_ name: String, _ type: String, _ help: String) {
        line("# HELP \(name) \(help)")
        line("# TYPE \(name) \(type)")
    }

    /// One sample; labels sorted by name. Label values here are fixed words: nothing to escape
    /// beyond what `escaped` does, for safety.
    mutating func sample(_ name: String, _ labels: [String: String], _ value: Double) {
        line(name + Self.labels(labels) + " " + Self.format(value))
    }

    /// A histogram's `_bucket`, `_sum` and `_count` samples.
    mutating func histogram(_ name: String, _ labels: [String: String], _ snapshot: Histogram.Snapshot) {
        for (index, count) in snapshot.cumulative.enumerated() {
            var withBound = labels
            withBound["le"] =
                index < ServerMetrics.bucketBounds.count ? Self.format(ServerMetrics.bucketBounds[index]) : "+Inf"
            sample(name + "_bucket", withBound, Double(count))
        }
        sample(name + "_sum", labels, snapshot.sum)
        sample(name + "_count", labels, Double(snapshot.count))
    }

    private mutating func line(_ text: String) {
        bytes.append(contentsOf: text.utf8)
        bytes.append(0x0A)
    }

    private static func labels(_ labels: [String: String]) -> String {
        guard !labels.isEmpty else { return "" }
        let pairs = labels.sorted { $0.key < $1.key }.map { "\($0.key)=\"\(escaped($0.value))\"" }
        return "{" + pairs.joined(separator: ",") + "}"
    }

    private static func escaped(_ value: String) -> String {
        value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
            .replacingOccurrences(of: "\n", with: "\\n")
    }

    /// Integers without a fraction, others as Swift prints them (which Prometheus reads).
    static func format(_ value: Double) -> String {
        if value == value.rounded(), abs(value) < 1e15 { return String(Int(value)) }
        return String(value)
    }
}
