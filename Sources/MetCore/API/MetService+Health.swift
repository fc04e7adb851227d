import Foundation

extension MetService {
    /// The server's version, shown by `/health` and `--version`.
    public static let version = "0.1.0"

    /// `GET /health`: liveness, the upstream's state (breaker, cool-down, calls by outcome, the
    /// pacer's figures), the cache's figures and the shared store's. Always 200 while the server runs; `status` is
    /// `degraded` when the upstream is blocked or failing.
    func health() -> Response {
        let now = time.now()
        let state = monitor.state(at: now)
        let figures = cache.statistics
        var json = JSONWriter()
        json.beginObject()
        json.member("status", string: state == .ok ? "ok" : "degraded")
        json.member("version", string: Self.version)
        json.member("uptimeSeconds", int: Int(now - startedAt))
        json.key("upstream")
        json.beginObject()
        json.member("location", string: upstreamLocation)
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
        guard let pacer = monitor.pacer?.figures else {
            preconditionFailure("MetService builds its MetClient in init, and the client installs the pacer")
        }
        json.beginObject()
        json.key("ratePerSecond")
        json.double(pacer.ratePerSecond)
        json.member("burst", int: pacer.burst)
        json.member("concurrency", int: pacer.concurrency)
        json.member("inFlight", int: pacer.inFlight)
        json.member("waiting", int: pacer.waiting)
        json.endObject()
        json.endObject()
        json.key("cache")
        json.beginObject()
        json.member("entries", int: figures.entries)
        json.member("bytes", int: figures.bytes)
        json.member("capacityBytes", int: figures.capacity)
        json.member("hits", int: figures.hits)
        json.member("misses", int: figures.misses)
        json.member("collapsed", int: figures.collapsed)
        json.member("staleServed", int: figures.staleServed)
        json.member("evictions", int: figures.evictions)
        json.member("inFlight", int: flightsInProgress)
        json.endObject()
        let storeCounts = store.counts
        json.key("store")
        json.beginObject()
        json.member("records", int: store.records.count)
        json.member("replacements", int: storeCounts.replacements)
        json.member("writes", int: storeCounts.writes)
        json.endObject()
        json.endObject()
        return Response(
            status: 200, headers: ["Content-Type": Response.jsonContentType, "Cache-Control": "no-store"],
            body: json.bytes)
    }

    /// ISO 8601 UTC with whole seconds.
    static func timestamp(_ seconds: Double) -> String {
        Date(timeIntervalSince1970: seconds.rounded(.up)).formatted(.iso8601)
    }
}
