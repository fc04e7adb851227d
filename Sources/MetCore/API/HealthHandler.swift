import Foundation
import MetEngine

/// `/health` and `/openapi.yaml`: what the server says about itself. Any thread.
struct HealthHandler: Sendable {
    let time: any TimeSource
    let monitor: UpstreamMonitor
    let pacer: UpstreamPacer
    let cache: MemoryCache
    let disk: (any PersistentTier)?
    let shared: (any SharedTier)?
    let flights: SingleFlight<Fill>
    let store: SharedStore
    /// Where misses go (`Upstream.location`).
    let upstreamLocation: String
    /// When the server started, seconds since 1970.
    let startedAt: Double
    /// The pictures' engine: its host, tiers and figures.
    let images: ImageEngine
    /// The document served at `/openapi.yaml`, as an entry stored at start-up.
    let openAPIDocument: CacheEntry

    /// `GET /health`: liveness, the upstream's state (breaker, cool-down, calls by outcome, the
    /// pacer's figures), the memory tier's figures, the persistent tier's (null when it is off), the
    /// shared tier's (null without `--redis`), the shared store's, and the pictures' (`images`: the
    /// image host's state and pacer, their memory tier, their files). Always 200 while the server
    /// runs; `status` is `degraded` when either host is blocked or failing, or Redis is down.
    func health() -> Response {
        let now = time.now()
        let state = monitor.state(at: now)
        let figures = cache.statistics
        let sharedStatus = shared?.status
        var json = JSONWriter()
        json.beginObject()
        let imagesState = images.monitor.state(at: now)
        json.member(
            "status",
            string: state == .ok && imagesState == .ok && sharedStatus?.connected != false ? "ok" : "degraded")
        json.member("version", string: MetService.version)
        json.member("uptimeSeconds", int: Int(now - startedAt))
        json.key("upstream")
        Self.writeUpstream(monitor: monitor, pacer: pacer, location: upstreamLocation, at: now, to: &json)
        json.key("cache")
        Self.write(figures, inFlight: flights.inFlight, to: &json)
        json.key("disk")
        if let disk { Self.write(disk.statistics, to: &json) } else { json.null() }
        json.key("redis")
        if let sharedStatus { Self.write(sharedStatus, to: &json) } else { json.null() }
        let storeCounts = store.counts
        json.key("store")
        json.beginObject()
        json.member("records", int: store.records.count)
        json.member("replacements", int: storeCounts.replacements)
        json.member("writes", int: storeCounts.writes)
        json.endObject()
        json.key("images")
        json.beginObject()
        json.key("upstream")
        Self.writeUpstream(
            monitor: images.monitor, pacer: images.pacer, location: images.location, at: now, to: &json)
        json.key("cache")
        Self.write(images.cache.statistics, inFlight: images.fetcher.flights.inFlight, to: &json)
        json.key("files")
        if let files = images.files { Self.write(files.statistics, to: &json) } else { json.null() }
        json.endObject()
        json.endObject()
        return Response(
            status: 200, headers: ["Content-Type": Response.jsonContentType, "Cache-Control": "no-store"],
            body: json.bytes)
    }

    /// `GET /openapi.yaml`, presented as of its creation: the document never ages while the
    /// process runs.
    func openAPI(_ presentation: Presentation, presenter: Presenter) -> Response {
        presenter.present(
            openAPIDocument, presentation, outcome: .none, at: openAPIDocument.storedAt,
            contentType: "application/yaml; charset=utf-8")
    }

    /// An upstream host's figures: where it is, its breaker, its calls by outcome, its pacer.
    private static func writeUpstream(
        monitor: UpstreamMonitor, pacer: UpstreamPacer, location: String, at now: Double, to json: inout JSONWriter
    ) {
        let state = monitor.state(at: now)
        json.beginObject()
        json.member("location", string: location)
        json.member("state", string: state.name)
        json.key("blockedUntil")
        if case .blocked(let until) = state { json.string(Self.timestamp(until)) } else { json.null() }
        json.key("lastError")
        if let lastError = monitor.lastError { json.string(lastError) } else { json.null() }
        json.key("calls")
        json.beginObject()
        for (outcome, count) in monitor.counts { json.member(outcome.rawValue, int: count) }
        json.endObject()
        json.key("blockCooldownSeconds")
        json.double(monitor.currentCooldown)
        json.key("pacer")
        let pacer = pacer.figures
        json.beginObject()
        json.key("ratePerSecond")
        json.double(pacer.ratePerSecond)
        json.member("burst", int: pacer.burst)
        json.member("concurrency", int: pacer.concurrency)
        json.member("inFlight", int: pacer.inFlight)
        json.member("waiting", int: pacer.waiting)
        json.key("waitingByClass")
        json.beginObject()
        json.member("foreground", int: pacer.waitingInForeground)
        json.member("background", int: pacer.waitingInBackground)
        json.endObject()
        json.member("clientsWaiting", int: pacer.clientsWaiting)
        json.member("clientQueue", int: pacer.clientLimit)
        json.member("refused", int: pacer.refused)
        json.endObject()
        json.endObject()
    }

    /// A memory tier's figures, with the fetches in flight through it.
    private static func write(_ figures: CacheStatistics, inFlight: Int, to json: inout JSONWriter) {
        json.beginObject()
        json.member("entries", int: figures.entries)
        json.member("bytes", int: figures.bytes)
        json.member("capacityBytes", int: figures.capacity)
        json.member("hits", int: figures.hits)
        json.member("diskHits", int: figures.diskHits)
        json.member("redisHits", int: figures.sharedHits)
        json.member("misses", int: figures.misses)
        json.member("collapsed", int: figures.collapsed)
        json.member("revalidating", int: figures.revalidating)
        json.member("staleServed", int: figures.staleServed)
        json.member("evictions", int: figures.evictions)
        json.member("inFlight", int: inFlight)
        json.endObject()
    }

    /// The persistent tier's figures, as the `disk` object.
    private static func write(_ figures: PersistentTierStatistics, to json: inout JSONWriter) {
        json.beginObject()
        json.member("location", string: figures.location)
        json.key("entries")
        if let entries = figures.entries { json.int(entries) } else { json.null() }
        json.key("bytes")
        if let bytes = figures.bytes { json.int(bytes) } else { json.null() }
        json.member("capacityBytes", int: figures.capacity)
        json.member("hits", int: figures.hits)
        json.member("misses", int: figures.misses)
        json.member("corrupt", int: figures.corrupt)
        json.member("writes", int: figures.writes)
        json.member("errors", int: figures.readErrors + figures.writeErrors)
        json.member("evictions", int: figures.evictions)
        json.member("queued", int: figures.queued)
        json.endObject()
    }

    /// The shared tier's state, as the `redis` object.
    private static func write(_ status: SharedTierStatus, to json: inout JSONWriter) {
        json.beginObject()
        json.member("location", string: status.location)
        json.member("state", string: status.connected ? "connected" : "down")
        json.key("roundTripMs")
        if let roundTrip = status.roundTrip { json.double((roundTrip * 1e6).rounded() / 1e3) } else { json.null() }
        json.member("unavailable", int: status.unavailable)
        json.member("disconnects", int: status.disconnects)
        json.key("lastError")
        if let lastError = status.lastError { json.string(lastError) } else { json.null() }
        json.member("signed", bool: status.signed)
        json.member("refused", int: status.refused)
        json.endObject()
    }

    /// ISO 8601 UTC with whole seconds.
    static func timestamp(_ seconds: Double) -> String {
        Date(timeIntervalSince1970: seconds.rounded(.up)).formatted(.iso8601)
    }
}
