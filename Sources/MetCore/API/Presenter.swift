import HTTPGrammar
import MetEngine

/// Turns cache entries into responses: `Cache-Control`, `Age`, `Cache-Status`, the ETag and 304,
/// the gzip choice and the `fields` projection; and upstream failures into their problems. Holds
/// no state but the responses it shares; any thread. A class, so that every pipeline shares it
/// for one retain.
final class Presenter: Sendable {
    let time: any TimeSource
    /// The breaker, for how long a block lasts (`Retry-After`).
    let monitor: UpstreamMonitor
    /// The most fetches one client may have waiting (`--client-queue`), for the 429's detail.
    let clientLimit: Int
    /// The plain hits' shared responses (`hit`), and the IIIF handler's: 4,096 entries' worth,
    /// several times the working sets hit many times a second.
    let hitResponses = HitResponseTable(sets: 2_048)

    init(time: any TimeSource, monitor: UpstreamMonitor, clientLimit: Int) {
        self.time = time
        self.monitor = monitor
        self.clientLimit = clientLimit
    }

    /// The response for one resolved resource: the entry presented (a shared response for a plain
    /// hit), or what its failure means to the client, as of `now`.
    func response(
        for resolution: Resolution, of resource: MetResource, _ presentation: Presentation, at now: Double
    ) -> Response {
        guard case .entry(let entry, let outcome) = resolution else {
            return failure(resolution, of: resource, metDialect: presentation.metDialect)
        }
        return outcome == .hit
            ? hit(entry, presentation, at: now) : present(entry, presentation, outcome: outcome, at: now)
    }

    /// The response for a resource that resolved to no entry: its problem when the upstream failed
    /// (said the Met's way, `MetDialect`, for the mirror), 499 when the client left.
    func failure(_ resolution: Resolution, of resource: MetResource, metDialect: Bool = false) -> Response {
        let problem: Problem
        switch resolution {
        case .failed(let error): problem = self.problem(for: error, resource: resource)
        case .cancelled: return Response(status: 499)
        case .entry, .pending: problem = Problem(.internalError, "\(resource.path) was not resolved.")
        }
        return metDialect ? MetDialect.response(for: problem) : problem.response
    }

    /// The response to a hit. A plain one (a 200 or a remembered 404, whole, without
    /// `If-None-Match`) is made at most once per second of the clock and of the entry's age, then
    /// shared by every such request meanwhile (`Response.shared`): the layers after this one derive
    /// from it once, too (but the request ID a problem is given, `Problem.identified`). A 404 is
    /// kept in two variants: the problem `object_not_found`, whose text is the entry's own ID (the
    /// only way `ObjectID` lets a request write it), and the Met's own body (the mirror).
    func hit(_ entry: CacheEntry, _ presentation: Presentation, at now: Double) -> Response {
        guard presentation.fields == nil, presentation.ifNoneMatch == nil, presentation.ifModifiedSince == nil,
            entry.status == 200 || entry.status == 404
        else {
            return present(entry, presentation, outcome: .hit, at: now)
        }
        let problem = entry.status == 404 && presentation.object != nil
        let gzip = !problem && presentation.acceptsGzip && entry.gzipped != nil
        return hitResponses.response(
            for: entry.serial, second: Int(now.rounded(.down)), age: Int(now.rounded(.down)) - entry.fetchedSecond,
            ttl: Int((entry.freshUntil - now).rounded(.down)), gzip: gzip, variant: problem ? "problem" : ""
        ) { present(entry, presentation, outcome: .hit, at: now) }
    }

    /// Turns an entry into the response for `presentation`: the stored bytes (or a projection of
    /// them), with ETag, Last-Modified, Cache-Control, Age and Cache-Status; a 304 when
    /// `If-None-Match` matches, or, without it, when the entry was not modified after
    /// `If-Modified-Since` (RFC 9110 §13.2.2: the ETag's test wins).
    func present(
        _ entry: CacheEntry, _ presentation: Presentation, outcome: CacheOutcome, at now: Double,
        contentType: String = Response.jsonContentType
    ) -> Response {
        // Room for these, Content-Encoding and the two CORS fields added around the handlers.
        var headers = HTTPFields(capacity: 10)
        let remaining = Int((entry.freshUntil - now).rounded(.down))
        headers.append("Cache-Control", Self.cacheControl(entry, at: now))
        headers.append("Age", String(max(0, Int(now.rounded(.down)) - entry.fetchedSecond)))
        if outcome != .none { headers.append("Cache-Status", Self.cacheStatus(outcome, ttl: remaining)) }
        let lastModified = Self.lastModified(of: entry)
        if let lastModified { headers.append("Last-Modified", HTTPDate.imfFixdate(lastModified)) }

        if entry.status == 404, let text = presentation.object {
            var problem = Problem(.objectNotFound, "The Met has no object \(text): \(entry.message ?? "not found").")
            problem.headers = headers
            var response = problem.response
            // Weak: the problem sent carries its request's ID (`Problem.identified`).
            response.headers.append("ETag", "W/" + ETag.strong(for: response.body))
            response.cacheOutcome = outcome
            response.date = entry.fetchedDate
            return response
        }

        var body = entry.body
        var etag = entry.etag
        var gzipped = false
        if let fields = presentation.fields, entry.status == 200 {
            if let projected = JSONProjection.project(body, fields: fields) {
                body = projected
                etag = ETag.strong(for: projected)
            }
        } else if let compressed = entry.gzipped, let compressedETag = entry.gzippedETag {
            headers.append("Vary", "Accept-Encoding")
            if presentation.acceptsGzip {
                body = compressed
                etag = compressedETag
                gzipped = true
            }
        }
        headers.append("ETag", etag)
        if entry.status == 200,
            Self.notModified(etag: etag, lastModified: lastModified, presentation, at: Int(now.rounded(.down)))
        {
            var notModified = Response(status: 304, headers: headers, cacheOutcome: outcome)
            notModified.date = entry.fetchedDate
            return notModified
        }
        headers.append("Content-Type", contentType)
        if gzipped { headers.append("Content-Encoding", "gzip") }
        var response = Response(status: entry.status, headers: headers, body: body, cacheOutcome: outcome)
        response.date = entry.fetchedDate
        return response
    }

    /// When `entry`'s answer was last modified, in seconds since 1970: an object record's
    /// `metadataDate` (when the Met changed it), never later than the fetch; the fetch for any
    /// other entry, and for a record without a readable `metadataDate`; nil for the server's own
    /// documents, which carry no date. Reads the record's JSON (a few microseconds): a plain hit
    /// shares the answer made with it for a second.
    static func lastModified(of entry: CacheEntry) -> Int? {
        guard let fetched = entry.fetchedDate else { return nil }
        guard entry.kind == .object, entry.status == 200,
            let reader = JSONReader(entry.body, names: [Array("metadataDate".utf8)]),
            case .string(let text) = reader.value(0), let changed = Timestamp.seconds(rfc3339: text)
        else { return fetched }
        return min(changed, fetched)
    }

    /// Whether a 200 with `etag` and `lastModified` is a 304 for `presentation` at `now`: the
    /// `If-None-Match` test when there is one; otherwise whether it was not modified after
    /// `If-Modified-Since`, a valid HTTP-date not later than now (else the field is ignored).
    static func notModified(etag: String, lastModified: Int?, _ presentation: Presentation, at now: Int) -> Bool {
        if let ifNoneMatch = presentation.ifNoneMatch { return ETag.ifNoneMatch(ifNoneMatch, matches: etag) }
        guard let text = presentation.ifModifiedSince, let lastModified,
            let since = HTTPDate.seconds(text, now: now), since <= now
        else { return false }
        return lastModified <= since
    }

    /// `max-age=N`, N the entry's whole lifetime from its fetch (with `Age`, the time since that
    /// fetch, a cache downstream reads the freshness left as N − Age, RFC 9111 §4.2), then what
    /// RFC 5861 lets such a cache do once that has run out, for as long as this server would:
    /// serve the answer while it revalidates (`stale-while-revalidate`) and when the origin
    /// fails (`stale-if-error`), each the length of this server's window past freshness, and
    /// left out once that window has run out. No `public`: no request carries credentials, so it
    /// would add nothing. The server's own documents never go stale while it runs, so they carry
    /// `max-age` alone.
    static func cacheControl(_ entry: CacheEntry, at now: Double) -> String {
        // Appended into room made once (a number is a small string, never allocated): adding
        // interpolated parts allocated each part and grew the value twice, on every disk hit.
        var value = "max-age="
        value.reserveCapacity(80)
        value.append(String(entry.lifetime))
        guard entry.kind != .document else { return value }
        let revalidate = Int((entry.revalidateUntil - entry.freshUntil).rounded(.down))
        if revalidate > 0, now < entry.revalidateUntil {
            value.append(", stale-while-revalidate=")
            value.append(String(revalidate))
        }
        let ifError = Int((entry.staleUntil - entry.freshUntil).rounded(.down))
        if ifError > 0, now < entry.staleUntil {
            value.append(", stale-if-error=")
            value.append(String(ifError))
        }
        return value
    }

    /// RFC 9211 `Cache-Status` for one outcome; `ttl` is the remaining freshness in seconds.
    static func cacheStatus(_ outcome: CacheOutcome, ttl: Int) -> String {
        switch outcome {
        case .hit: "TheMet; hit; ttl=\(ttl)"
        case .diskHit: "TheMet; hit; ttl=\(ttl); detail=disk"
        case .sharedHit: "TheMet; hit; ttl=\(ttl); detail=redis"
        case .miss: "TheMet; fwd=uri-miss; stored"
        case .collapsed: "TheMet; fwd=uri-miss; collapsed"
        case .revalidating: "TheMet; fwd=stale; ttl=\(ttl); detail=revalidating"
        case .stale: "TheMet; fwd=stale; ttl=\(ttl); detail=upstream-failed"
        case .none: ""
        }
    }

    /// The outcome shown for a response built from several entries: the least cached one wins.
    static func combine(_ first: CacheOutcome, _ second: CacheOutcome) -> CacheOutcome {
        func rank(_ outcome: CacheOutcome) -> Int {
            switch outcome {
            case .none: 0
            case .hit: 1
            case .diskHit: 2
            case .sharedHit: 3
            case .collapsed: 4
            case .miss: 5
            case .revalidating: 6
            case .stale: 7
            }
        }
        return rank(second) > rank(first) ? second : first
    }

    /// What an upstream failure of `resource` means to the client (see the static function).
    func problem(for error: UpstreamError, resource: MetResource) -> Problem {
        Self.problem(
            for: error, fetching: resource.path, from: "the Met", monitor: monitor, clientLimit: clientLimit,
            at: time.now())
    }

    /// The one mapping from an upstream failure to what the client sees (502, 503 or 504).
    ///
    /// - Parameters:
    ///   - path: what was fetched; `host`: from where, as a sentence names it (`the Met`).
    ///   - monitor: the host's breaker, for how long a block lasts (`Retry-After`).
    static func problem(
        for error: UpstreamError, fetching path: String, from host: String, monitor: UpstreamMonitor, clientLimit: Int,
        at now: Double
    ) -> Problem {
        let what = "fetching \(path) from \(host)"
        let subject = host.prefix(1).uppercased() + host.dropFirst()
        switch error {
        case .blocked:
            let until = monitor.blockedUntil(at: now) ?? now + monitor.blockCooldown
            let seconds = max(1, Int((until - now).rounded(.up)))
            return Problem(
                .upstreamBlocked,
                "\(subject)'s firewall is refusing requests from this server; calls to it are paused for \(seconds) s.",
                headers: ["Retry-After": String(seconds)])
        case .timeout:
            return Problem(.upstreamTimeout, "\(subject) did not answer in time while \(what).")
        case .unreachable(let reason):
            return Problem(.upstreamUnreachable, "Could not reach \(host) while \(what): \(reason).")
        case .status(503):
            return Problem(.upstreamUnavailable, "\(subject) answered 503 Service Unavailable while \(what).")
        case .status(let code):
            return Problem(.upstreamError, "\(subject) answered HTTP \(code) while \(what).")
        case .malformed(let reason):
            return Problem(.upstreamMalformed, "The answer of \(host) could not be used while \(what): \(reason).")
        case .cancelled:
            return Problem(.internalError, "The request was cancelled.")
        case .clientQueueFull(let retryAfter):
            let seconds = max(1, Int(retryAfter.rounded(.up)))
            return Problem(
                .tooManyRequests,
                "This client already has \(clientLimit) fetches waiting for their turn with \(host); answers the "
                    + "cache holds are not limited, and what must be fetched can be asked for again in \(seconds) s.",
                headers: ["Retry-After": String(seconds)])
        }
    }
}
