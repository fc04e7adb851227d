/// The whole server behind the `Responder` seam: routing, validation, the cache and the upstream.
/// One instance serves every loop; all of its state is thread-safe.
public final class MetService: Responder {
    /// What a request needs once it has been routed and validated.
    enum Plan {
        /// The answer is known without the cache.
        case answer(Response)
        /// The answer is a cache entry for this resource, presented for this route.
        case resource(MetResource, Presentation)
        /// The answer is a hydrated search page.
        case search(SearchQuery, Presentation)
        /// The answer is a widget timeline built from a hydrated search.
        case widget(WidgetRequest, Presentation)
        /// The answer is where object `id`'s deep link leads (a 302, or JSON when `asJSON`).
        case open(id: Int, asJSON: Bool)
    }

    /// How a resource was obtained.
    enum Resolution {
        /// An entry to serve, and how the cache got it (hit, miss, collapsed, or stale because
        /// the upstream failed).
        case entry(CacheEntry, CacheOutcome)
        /// The upstream failed and no stale entry could stand in.
        case failed(UpstreamError)
        /// The requesting task was cancelled (its client left).
        case cancelled
    }

    /// How an entry is turned into a response.
    struct Presentation {
        /// The route asked for.
        var route: Route
        /// Top-level members to keep (`fields=`), or nil for the whole body.
        var fields: Set<String>?
        /// The request's `If-None-Match`, if any.
        var ifNoneMatch: String?
        /// Whether the client accepts a gzip body (`Accept-Encoding`).
        var acceptsGzip = false

        /// The presentation of `route` for `request` (its conditional and encoding headers).
        init(_ route: Route, for request: Request, fields: Set<String>? = nil) {
            self.route = route
            self.fields = fields
            ifNoneMatch = request.headers["If-None-Match"]
            acceptsGzip = request.headers["Accept-Encoding"].map(Self.acceptsGzip) ?? false
        }

        /// Whether an `Accept-Encoding` value allows gzip: `gzip` (or `*`) listed with a non-zero q.
        static func acceptsGzip(_ value: String) -> Bool {
            var wildcard = false
            for item in value.split(separator: ",") {
                let parts = item.split(separator: ";")
                let coding = (parts.first ?? "").trimmingSpaces().lowercased()
                let quality =
                    parts.dropFirst().lazy.map { $0.trimmingSpaces() }
                    .first { $0.lowercased().hasPrefix("q=") }
                    .flatMap { Double($0.dropFirst(2)) } ?? 1
                if coding == "gzip" || coding == "x-gzip" { return quality > 0 }
                if coding == "*" { wildcard = quality > 0 }
            }
            return wildcard
        }
    }

    /// The methods every route answers.
    static let allowedMethods = "GET, HEAD, OPTIONS"

    let cache: MemoryCache
    let monitor: UpstreamMonitor
    /// Upstream fetches in progress; internal so tests can see who waits on them.
    let flights = SingleFlight<CacheEntry>()
    private let client: MetClient
    let time: any TimeSource
    let logger: Logger
    private let freshness: FreshnessPolicy
    private let limits: RequestLimits
    private let corsOrigin: String
    let upstreamLocation: String
    let startedAt: Double
    private let openAPIDocument: CacheEntry
    private let compress: (@Sendable ([UInt8]) -> [UInt8])?
    /// `--detail-url`: where public-domain objects' deep links lead.
    let detailURL: String
    /// `--public-url`: makes the widget's links absolute.
    let publicURL: String?
    /// The latest search results (`objects.json`).
    public let store: SharedStore
    /// `--search-api`.
    let searchMode: SearchAPIMode
    /// The generation `auto` currently uses; it moves when the other one answers 404 or 410.
    let searchGeneration: Locked<SearchAPI>
    /// Object fetches that searches started and no longer wait for; bounded by `maxBackgroundFills`.
    let backgroundFills = Locked(0)
    /// The most background object fetches at once; beyond it, IDs stay `pending`.
    static let maxBackgroundFills = 1_000

    /// - Parameters:
    ///   - configuration: cache size, freshness, limits, CORS origin and block cool-down are read from it.
    ///   - upstream: where misses are fetched.
    ///   - time: the clock for freshness and `Age`.
    ///   - openAPI: the bytes served at `/openapi.yaml`.
    ///   - compress: gzip, to keep a compressed copy of each entry for clients that accept it;
    ///     nil serves identity bodies only.
    public init(
        configuration: ServerConfiguration, upstream: any Upstream, time: any TimeSource, logger: Logger,
        openAPI: [UInt8], compress: (@Sendable ([UInt8]) -> [UInt8])? = nil
    ) {
        self.compress = compress
        detailURL = configuration.detailURL
        publicURL = configuration.publicURL
        store = SharedStore(
            directory: configuration.dataDirectory, capacity: configuration.widgetObjects, logger: logger)
        searchMode = configuration.searchAPI
        searchGeneration = Locked(configuration.searchAPI == .v1 ? .v1 : .v1_1)
        cache = MemoryCache(capacity: configuration.cacheSize)
        monitor = UpstreamMonitor(blockCooldown: configuration.blockCooldown)
        client = MetClient(
            configuration: configuration, upstream: upstream, monitor: monitor, time: time, logger: logger)
        self.time = time
        self.logger = logger
        freshness = configuration.freshness
        limits = configuration.limits
        corsOrigin = configuration.corsOrigin
        upstreamLocation = upstream.location
        startedAt = time.now()
        openAPIDocument = CacheEntry(
            key: "/openapi.yaml", kind: .document, status: 200, body: openAPI, storedAt: startedAt,
            policy: FreshnessPolicy(), compress: compress)
    }

    public func respondImmediately(to request: Request) -> Response? {
        switch plan(for: request) {
        case .answer(let response):
            return finish(response)
        case .resource(let resource, let presentation):
            let now = time.now()
            guard let entry = freshEntry(for: resource, at: now) else { return nil }
            cache.count(.hit)
            if presentation.fields == nil && presentation.ifNoneMatch == nil && entry.status == 200 {
                return hitResponse(entry, presentation, at: now)
            }
            return finish(present(entry, presentation, outcome: .hit, at: now))
        case .search(let query, let presentation):
            return searchImmediately(query, presentation).map(finish)
        case .widget(let widget, let presentation):
            return widgetImmediately(widget, presentation).map(finish)
        case .open(let id, let asJSON):
            return openImmediately(id, asJSON: asJSON).map(finish)
        }
    }

    public func respond(to request: Request) async -> Response {
        switch plan(for: request) {
        case .answer(let response):
            return finish(response)
        case .resource(let resource, let presentation):
            return finish(await fetch(resource, presentation))
        case .search(let query, let presentation):
            return finish(await search(query, presentation))
        case .widget(let widget, let presentation):
            return finish(await widgetTimeline(widget, presentation))
        case .open(let id, let asJSON):
            return finish(await open(id, asJSON: asJSON))
        }
    }

    /// Upstream fetches in progress (single-flight keys).
    var flightsInProgress: Int { flights.inFlight }

    /// A fresh entry for `resource`, if the memory tier has one. Any thread; never waits.
    func freshEntry(for resource: MetResource, at now: Double) -> CacheEntry? {
        guard let entry = cache.entry(for: resource.cacheKey), entry.isFresh(at: now) else { return nil }
        return entry
    }

    /// Answers `resource` from the cache, or asks the upstream once for all concurrent requests
    /// of the same key, falling back to a stale entry when the upstream fails. Counts the outcome.
    func resolve(_ resource: MetResource) async -> Resolution {
        let key = resource.cacheKey
        let cached = cache.entry(for: key)
        if let cached, cached.isFresh(at: time.now()) {
            cache.count(.hit)
            return .entry(cached, .hit)
        }
        let (result, joined) = await flights.run(key) { [client, cache, time, freshness, compress] in
            await client.fetch(resource).map { answer in
                let entry = CacheEntry(
                    key: key, kind: resource.kind, status: answer.status, body: answer.body, storedAt: time.now(),
                    policy: freshness, message: answer.message, details: answer.details, compress: compress)
                cache.store(entry)
                return entry
            }
        }
        // Only this request's own cancellation (its client left) ends here; the answer goes nowhere.
        if case .failure(.cancelled) = result { return .cancelled }
        let outcome: CacheOutcome = joined ? .collapsed : .miss
        cache.count(outcome)
        switch result {
        case .success(let entry):
            return .entry(entry, outcome)
        case .failure(let error):
            if let stale = cached ?? cache.entry(for: key), stale.isUsableWhenStale(at: time.now()) {
                cache.count(.stale)
                return .entry(stale, .stale)
            }
            return .failed(error)
        }
    }

    /// The response for one resource route.
    private func fetch(_ resource: MetResource, _ presentation: Presentation) async -> Response {
        switch await resolve(resource) {
        case .entry(let entry, let outcome): present(entry, presentation, outcome: outcome, at: time.now())
        case .failed(let error): problem(for: error, resource: resource).response
        case .cancelled: Response(status: 499)
        }
    }

    /// Routes and validates a request; everything that needs no cache or upstream is answered here.
    func plan(for request: Request) -> Plan {
        do {
            return try validatedPlan(for: request)
        } catch {
            return .answer(error.response)
        }
    }

    private func validatedPlan(for request: Request) throws(Problem) -> Plan {
        try checkLimits(request)
        let target = try RequestTarget(parsing: request.target)
        guard let route = Route(path: target.path) else {
            throw Problem(.routeNotFound, "There is no route \(target.path.prefix(200)); see /openapi.yaml.")
        }
        switch request.method {
        case "GET", "HEAD": break
        case "OPTIONS": return .answer(preflight(request))
        default:
            throw Problem(
                .methodNotAllowed, "\(request.method.prefix(20)) is not allowed here; use GET or HEAD.",
                headers: ["Allow": Self.allowedMethods])
        }
        switch route {
        case .health:
            return .answer(health())
        case .openAPI:
            // Presented as of its creation: the document never ages while the process runs.
            return .answer(
                present(
                    openAPIDocument, Presentation(route, for: request),
                    outcome: .none, at: openAPIDocument.storedAt, contentType: "application/yaml; charset=utf-8"))
        case .departments:
            try Self.allowOnly([], in: target)
            return .resource(.departments, Presentation(route, for: request))
        case .object(let text):
            try Self.allowOnly(["fields"], in: target)
            let id = try ObjectID.parse(text)
            let fields = try target.value(of: "fields").map(Self.parseFields)
            return .resource(.object(id: id), Presentation(route, for: request, fields: fields))
        case .mirrorObject(let text):
            return mirrorObjectPlan(text, route: route, request: request)
        case .mirrorObjectList:
            return try mirrorListPlan(target, route: route, request: request)
        case .mirrorDepartments:
            return .resource(.departments, Presentation(route, for: request))
        case .search:
            var query = try SearchQuery(target)
            if request.isHead { query.store = false }  // a HEAD never replaces the latest results
            return .search(query, Presentation(route, for: request))
        case .widgetTimeline:
            var widget = try WidgetRequest(target)
            if request.isHead { widget.search?.store = false }
            if widget.search == nil { return .answer(storeTimeline(widget, Presentation(route, for: request))) }
            return .widget(widget, Presentation(route, for: request))
        case .open(let text):
            let asJSON = try Self.openFormat(target, allowing: text == nil ? ["url", "format"] : ["format"])
            let id: Int
            if let text {
                id = try ObjectID.parse(text)
            } else {
                guard let url = target.value(of: "url") else {
                    throw Problem(
                        .invalidParameter, "url is required: a deep link such as themet://436535.", parameter: "url")
                }
                id = try DeepLink.objectID(in: url)
            }
            return .open(id: id, asJSON: asJSON)
        case .mirrorSearch(let api):
            if api == .v1, (target.value(of: "q") ?? "").isEmpty {
                // The Met's v1 answers 502 without q (API.md §5): say why here instead of asking it.
                throw Problem(
                    .invalidParameter, "q is required: the Met's v1 search fails without it.", parameter: "q")
            }
            return .resource(Self.mirrorSearchResource(api, target), Presentation(route, for: request))
        }
    }

    private func checkLimits(_ request: Request) throws(Problem) {
        if request.target.utf8.count > limits.maxURILength {
            throw Problem(.uriTooLong, "The request target is longer than \(limits.maxURILength) bytes.")
        }
        let headerBytes = request.headers.reduce(0) { $0 + $1.name.utf8.count + $1.value.utf8.count + 4 }
        if headerBytes > limits.maxHeaderBytes {
            throw Problem(.headersTooLarge, "The header fields take more than \(limits.maxHeaderBytes) bytes.")
        }
        if request.body.count > limits.maxBodyBytes {
            throw Problem(.bodyTooLarge, "The request body is larger than \(limits.maxBodyBytes) bytes.")
        }
    }

    /// The mirror reads IDs as the Met does: any run of digits (leading zeros included) is an ID;
    /// a sign or a value no object can have is "not found", and anything else "could not parse",
    /// each answered with the Met's own body without asking it.
    private func mirrorObjectPlan(_ text: String, route: Route, request: Request) -> Plan {
        let digits = text.first == "-" ? text.dropFirst() : text[...]
        let isInteger = !digits.isEmpty && digits.allSatisfy(\.isASCIIDigit)
        if isInteger, text.first != "-", let id = Int(digits), (1...ObjectID.maximum).contains(id) {
            return .resource(.object(id: id), Presentation(route, for: request))
        }
        let (status, message) = isInteger ? (404, "ObjectID not found") : (400, "could not parse objectID")
        var json = JSONWriter()
        json.beginObject()
        json.member("message", string: message)
        json.endObject()
        return .answer(
            Response(
                status: status, headers: ["Content-Type": Response.jsonContentType, "Cache-Control": "no-store"],
                body: json.bytes))
    }

    private func mirrorListPlan(_ target: RequestTarget, route: Route, request: Request) throws(Problem) -> Plan {
        var departmentIds: [Int] = []
        if let text = target.value(of: "departmentIds"), !text.isEmpty {
            var ids = Set<Int>()
            for part in text.split(separator: "|", omittingEmptySubsequences: false) {
                guard let id = Int(part), id > 0, part.allSatisfy(\.isASCIIDigit) else {
                    throw Problem(
                        .invalidParameter, "departmentIds must be department IDs joined by '|', such as 1|11.",
                        parameter: "departmentIds")
                }
                ids.insert(id)
            }
            departmentIds = ids.sorted()
        }
        var metadataDate: String?
        if let text = target.value(of: "metadataDate"), !text.isEmpty {
            guard Self.isCalendarDate(text) else {
                // The Met's own answer, a bare JSON string (API.md §2).
                let body = Array(#""Date not valid. Dates must be in the format YYYY-MM-DD e.g. 1987-05-03""#.utf8)
                return .answer(
                    Response(
                        status: 400,
                        headers: [
                            "Content-Type": Response.jsonContentType,
                            "Cache-Control": "no-store",
                        ], body: body))
            }
            metadataDate = text
        }
        return .resource(
            .objectList(departmentIds: departmentIds, metadataDate: metadataDate),
            Presentation(route, for: request))
    }

    /// Turns an entry into the response for `presentation`: the stored bytes (or a projection of
    /// them), with ETag, Cache-Control, Age and Cache-Status; a 304 when `If-None-Match` matches.
    private func present(
        _ entry: CacheEntry, _ presentation: Presentation, outcome: CacheOutcome, at now: Double,
        contentType: String = Response.jsonContentType
    ) -> Response {
        // Room for these, Content-Encoding and the two CORS fields `finish` adds.
        var headers = HTTPFields(capacity: 10)
        let remaining = Int((entry.freshUntil - now).rounded(.down))
        headers.append("Cache-Control", "public, max-age=\(max(0, remaining))")
        headers.append("Age", String(max(0, Int((now - entry.storedAt).rounded(.down)))))
        if outcome != .none { headers.append("Cache-Status", Self.cacheStatus(outcome, ttl: remaining)) }

        if entry.status == 404, !presentation.route.isMirror, case .object(let text) = presentation.route {
            var problem = Problem(.objectNotFound, "The Met has no object \(text): \(entry.message ?? "not found").")
            problem.headers = headers
            var response = problem.response
            response.headers.append("ETag", ETag.strong(for: response.body))
            response.cacheOutcome = outcome
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
        if entry.status == 200, let ifNoneMatch = presentation.ifNoneMatch, ETag.ifNoneMatch(ifNoneMatch, matches: etag)
        {
            return Response(status: 304, headers: headers, cacheOutcome: outcome)
        }
        headers.append("Content-Type", contentType)
        if gzipped { headers.append("Content-Encoding", "gzip") }
        return Response(status: entry.status, headers: headers, body: body, cacheOutcome: outcome)
    }

    /// The response to a plain hit (a 200 entry, whole, without `If-None-Match`): made at most once
    /// per second of the clock and of the entry's age, with its wire head, then shared by every
    /// such request meanwhile. Saves presenting and encoding the same headers on each hit.
    private func hitResponse(_ entry: CacheEntry, _ presentation: Presentation, at now: Double) -> Response {
        let second = Int(now.rounded(.down))
        let age = Int((now - entry.storedAt).rounded(.down))
        let gzip = presentation.acceptsGzip && entry.gzipped != nil
        let shared = entry.hitResponses.withLock { responses -> Response? in
            guard responses.second == second, responses.age == age else { return nil }
            return gzip ? responses.gzipped : responses.identity
        }
        if let shared { return shared }
        var response = finish(present(entry, presentation, outcome: .hit, at: now))
        response.wireHead =
            ResponseEncoder.encode(
                response, isHead: false, minorVersion: 1, close: false, date: HTTPDate.fieldLine(second)
            ).head
        entry.hitResponses.withLock { responses in
            if responses.second != second || responses.age != age {
                responses = HitResponses(second: second, age: age)
            }
            if gzip { responses.gzipped = response } else { responses.identity = response }
        }
        return response
    }

    /// RFC 9211 `Cache-Status` for one outcome; `ttl` is the remaining freshness in seconds.
    static func cacheStatus(_ outcome: CacheOutcome, ttl: Int) -> String {
        switch outcome {
        case .hit: "TheMet; hit; ttl=\(ttl)"
        case .miss: "TheMet; fwd=uri-miss; stored"
        case .collapsed: "TheMet; fwd=uri-miss; collapsed"
        case .stale: "TheMet; fwd=stale; ttl=\(ttl); detail=upstream-failed"
        case .none: ""
        }
    }

    /// The one mapping from an upstream failure to what the client sees (502, 503 or 504).
    func problem(for error: UpstreamError, resource: MetResource) -> Problem {
        let what = "fetching \(resource.path) from the Met"
        switch error {
        case .blocked:
            let until = monitor.blockedUntil(at: time.now()) ?? time.now() + monitor.blockCooldown
            let seconds = max(1, Int((until - time.now()).rounded(.up)))
            return Problem(
                .upstreamBlocked,
                "The Met's firewall is refusing requests from this server; upstream calls are paused for \(seconds) s.",
                headers: ["Retry-After": String(seconds)])
        case .timeout:
            return Problem(.upstreamTimeout, "The Met did not answer in time while \(what).")
        case .unreachable(let reason):
            return Problem(.upstreamUnreachable, "Could not reach the Met while \(what): \(reason).")
        case .status(503):
            return Problem(.upstreamUnavailable, "The Met answered 503 Service Unavailable while \(what).")
        case .status(let code):
            return Problem(.upstreamError, "The Met answered HTTP \(code) while \(what).")
        case .malformed(let reason):
            return Problem(.upstreamMalformed, "The Met's answer could not be used while \(what): \(reason).")
        case .cancelled:
            return Problem(.internalError, "The request was cancelled.")
        }
    }

    /// Adds the headers every response carries (CORS).
    private func finish(_ response: Response) -> Response {
        var response = response
        response.headers.append("Access-Control-Allow-Origin", corsOrigin)
        response.headers.append("Access-Control-Expose-Headers", "ETag, Age, Cache-Status, Retry-After")
        return response
    }

    /// Answers a CORS preflight for a known route.
    private func preflight(_ request: Request) -> Response {
        var headers: HTTPFields = [
            "Allow": Self.allowedMethods,
            "Access-Control-Allow-Methods": Self.allowedMethods,
            "Access-Control-Max-Age": "86400",
        ]
        headers.append(
            "Access-Control-Allow-Headers", CORSHeaders.allowed(for: request.headers["Access-Control-Request-Headers"]))
        return Response(status: 204, headers: headers)
    }

    /// Throws `unknown_parameter` for any query parameter not in `allowed`.
    static func allowOnly(_ allowed: Set<String>, in target: RequestTarget) throws(Problem) {
        if let unknown = target.query.first(where: { !allowed.contains($0.name) }) {
            let known =
                allowed.isEmpty
                ? "This route takes no parameters." : "Known: \(allowed.sorted().joined(separator: ", "))."
            throw Problem(
                .unknownParameter, "Unknown parameter '\(unknown.name.prefix(60))'. \(known)",
                parameter: String(unknown.name.prefix(60)))
        }
    }

    /// `fields=a,b,c`: 1 to 64 member names made of letters, digits and `_`.
    static func parseFields(_ text: String) throws(Problem) -> Set<String> {
        let names = text.split(separator: ",", omittingEmptySubsequences: false)
        guard (1...64).contains(names.count),
            names.allSatisfy({ name in
                !name.isEmpty && name.count <= 64
                    && name.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_") }
            })
        else {
            throw Problem(
                .invalidParameter,
                "fields must be 1 to 64 member names joined by commas, such as objectID,title,primaryImageSmall.",
                parameter: "fields")
        }
        return Set(names.map(String.init))
    }

    /// Whether `text` is a real `YYYY-MM-DD` date.
    static func isCalendarDate(_ text: String) -> Bool {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].count == 4, parts[1].count == 2, parts[2].count == 2,
            parts.allSatisfy({ $0.allSatisfy(\.isASCIIDigit) }),
            let year = Int(parts[0]), let month = Int(parts[1]), let day = Int(parts[2]), (1...12).contains(month)
        else { return false }
        let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
        let days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1]
        return (1...days).contains(day)
    }
}

extension Character {
    /// `0`–`9` only (unlike `isNumber`, which accepts every script's digits and fractions).
    var isASCIIDigit: Bool { isASCII && isWholeNumber }
}
