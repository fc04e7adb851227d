/// What a request asks for, once routed and validated.
enum RoutedRequest {
    /// The answer is known without the cache (a Met-dialect error of the mirror, for one).
    case answer(Response)
    /// A CORS preflight for a known route that answers these methods (`Allow`'s value).
    case preflight(methods: String)
    /// `/health`.
    case health
    /// `/metrics`.
    case metrics
    /// `/openapi.yaml`.
    case openAPI(Presentation)
    /// One cache entry for this resource, presented for this route (objects, departments, the mirror).
    case resource(MetResource, Presentation)
    /// A hydrated search page.
    case search(SearchQuery, Presentation)
    /// A widget timeline, of a hydrated search or (without `q`) of the shared store.
    case widget(WidgetRequest, Presentation)
    /// Where object `id`'s deep link leads (a 302, or JSON when `asJSON`).
    case open(id: Int, asJSON: Bool)
    /// Several records at once.
    case objectBatch(ObjectBatch, Presentation)
    /// A random object.
    case random(RandomRequest)
    /// Object `id`'s IIIF manifest.
    case iiifManifest(id: Int, Presentation)
    /// One of the explorer's files.
    case explorer(ExplorerAsset, Presentation)
    /// Remove these cache keys from every tier (an authorized `DELETE /cache/…`).
    case purge([String])
}

/// Routes a request and validates it, once: the size limits, the target, the route, the method
/// and every parameter. Every failure a client can cause becomes its problem document here, before
/// any cache lookup. Any thread; no state.
struct Router: Sendable {
    let limits: RequestLimits
    /// `--admin-token`: when set, the one way to purge, from anywhere (this machine included).
    let adminToken: String?
    /// `--trusted-proxy`: a request through one of them is never "from this machine".
    let proxies: TrustedProxies

    // The parameters each route takes, made once (routing runs on every request, hits included).
    private static let noParameters: Set<String> = []
    private static let objectParameters: Set<String> = ["fields"]
    private static let openIDParameters: Set<String> = ["format"]
    private static let openLinkParameters: Set<String> = ["url", "format"]

    /// The routed request, or the answer to a request that cannot be served as asked, with how
    /// `/metrics` labels its route (`.none` when no route matched). Under the mirror's prefix
    /// that answer is in the Met's dialect (`MetDialect`), elsewhere a problem document.
    func route(_ request: Request) -> (RoutedRequest, MetricRoute) {
        var label = MetricRoute.none
        do {
            return (try validated(request, label: &label), label)
        } catch {
            return (
                .answer(MetDialect.isMirror(request.target) ? MetDialect.response(for: error) : error.response), label
            )
        }
    }

    private func validated(_ request: Request, label: inout MetricRoute) throws(Problem) -> RoutedRequest {
        try checkLimits(request)
        var target = try RequestTarget(parsing: request.target)
        // A cache-buster (`_=1733040000000`, jQuery's `cache: false` and others) means nothing
        // here: every route ignores it, and it is no part of any key.
        target.query.removeAll { $0.name == "_" }
        guard let route = Route(path: target.path) else {
            throw Problem(.routeNotFound, "There is no route \(target.path.prefix(200)); see /openapi.yaml.")
        }
        label = route.metricRoute
        switch (request.method, route.isPurge) {
        case ("GET", false), ("HEAD", false): break
        case ("DELETE", true): return try purge(route, target, request)
        case ("OPTIONS", _): return .preflight(methods: route.allowedMethods)
        default:
            let use = route.isPurge ? "DELETE" : "GET or HEAD"
            throw Problem(
                .methodNotAllowed, "\(request.method.prefix(20)) is not allowed here; use \(use).",
                headers: ["Allow": route.allowedMethods])
        }
        // A HEAD never replaces the latest results.
        let isHead = request.method == "HEAD"
        switch route {
        case .health:
            return .health
        case .metrics:
            return .metrics
        case .openAPI:
            return .openAPI(Presentation(route, for: request))
        case .departments:
            try target.allowOnly(Self.noParameters)
            return .resource(.departments, Presentation(route, for: request))
        case .explorer(let asset):
            // A query is ignored: links to the page get tracking parameters (utm_…, fbclid) added.
            return .explorer(asset, Presentation(route, for: request))
        case .objectBatch:
            return .objectBatch(try ObjectBatch(target), Presentation(route, for: request))
        case .random:
            return .random(try RandomRequest(target))
        case .iiifManifest(let text):
            try target.allowOnly(Self.noParameters)
            return .iiifManifest(id: try ObjectID.parse(text), Presentation(route, for: request))
        case .object(let text):
            try target.allowOnly(Self.objectParameters)
            let id = try ObjectID.parse(text)
            let fields = try target.value(of: "fields").map { (text) throws(Problem) in
                try FieldList(parsing: text).names
            }
            return .resource(.object(id: id), Presentation(route, for: request, fields: fields))
        case .mirrorObject(let text):
            return mirrorObject(text, route: route, request: request)
        case .mirrorObjectList:
            return try mirrorObjectList(target, route: route, request: request)
        case .mirrorDepartments:
            return .resource(.departments, Presentation(route, for: request))
        case .search:
            var query = try SearchQuery(target)
            if isHead { query.store = false }
            return .search(query, Presentation(route, for: request))
        case .widgetTimeline:
            var widget = try WidgetRequest(target)
            if isHead { widget.search?.store = false }
            return .widget(widget, Presentation(route, for: request))
        case .open(let text):
            let asJSON = try target.redirectFormat(
                allowing: text == nil ? Self.openLinkParameters : Self.openIDParameters)
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
        case .purgeObject, .purgeSearch:
            // Only DELETE reaches a purge (above); nothing else gets this far, but if it did, this is its answer.
            throw Problem(
                .methodNotAllowed, "\(request.method.prefix(20)) is not allowed here; use DELETE.",
                headers: ["Allow": route.allowedMethods])
        case .mirrorSearch(let api):
            if api == .v1, target.value(of: "q") == nil {
                // The Met's v1 answers 502 without q (docs/MET-API.md §5): say why here instead of asking
                // it. An empty `q=` goes to the Met, which answers it (with highlights: OA#36).
                throw Problem(
                    .invalidParameter, "q is required: the Met's v1 search fails without it.", parameter: "q")
            }
            return .resource(Self.mirrorSearchResource(api, target), Presentation(route, for: request))
        }
    }

    /// The keys a `DELETE /cache/…` removes, once the client may purge: one object's record, or
    /// the ID lists of a search (its v1 list and every v1.1 page of its window; the parameters are
    /// `/search`'s, validated as there).
    private func purge(_ route: Route, _ target: RequestTarget, _ request: Request) throws(Problem) -> RoutedRequest {
        if adminToken != nil {
            guard isAdmin(request) else {
                throw Problem(.forbidden, "Purging needs Authorization: Bearer and the server's --admin-token.")
            }
        } else if !isLocal(request) {
            throw Problem(
                .forbidden,
                "Purging is allowed only from this machine, not through a proxy; the server's --admin-token "
                    + "allows it from anywhere.")
        }
        switch route {
        case .purgeObject(let text):
            try target.allowOnly(Self.noParameters)
            return .purge([MetResource.object(id: try ObjectID.parse(text)).cacheKey])
        default:
            let query = try SearchQuery(target)
            return .purge(
                [SearchAPI.v1, .v1_1].flatMap { SearchWindow(query: query, api: $0).everyResource() }.map(\.cacheKey))
        }
    }

    /// Whether `request` comes straight from this machine: its peer is loopback, is not a trusted
    /// proxy, and it carries no forwarding field (a proxy on this host, trusted or not, never makes a
    /// remote client local; one that adds no such field cannot be told from a local client, which
    /// is why the README's proxy set-ups all add one, and why `--admin-token` is safer).
    private func isLocal(_ request: Request) -> Bool {
        guard request.peer.isLoopback else { return false }
        guard let address = request.peer.address else { return !TrustedProxies.hasForwardingField(request.headers) }
        return proxies.client(peer: address, fields: request.headers).isLocal
    }

    /// Whether `request` carries `Authorization: Bearer <--admin-token>` (compared in constant time).
    private func isAdmin(_ request: Request) -> Bool {
        guard let token = adminToken, let field = request.headers["Authorization"] else { return false }
        let given = Array(field.utf8)
        let expected = Array(("Bearer " + token).utf8)
        guard given.count == expected.count else { return false }
        var difference: UInt8 = 0
        for (a, b) in zip(given, expected) { difference |= a ^ b }
        return difference == 0
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
    private func mirrorObject(_ text: String, route: Route, request: Request) -> RoutedRequest {
        let digits = text.first == "-" ? text.dropFirst() : text[...]
        let isInteger = !digits.isEmpty && digits.allSatisfy(\.isASCIIDigit)
        if isInteger, text.first != "-", let id = Int(digits), (1...ObjectID.maximum).contains(id) {
            return .resource(.object(id: id), Presentation(route, for: request))
        }
        let (status, message) = isInteger ? (404, "ObjectID not found") : (400, "could not parse objectID")
        return .answer(MetDialect.response(status: status, message: message))
    }

    private func mirrorObjectList(
        _ target: RequestTarget, route: Route, request: Request
    ) throws(Problem) -> RoutedRequest {
        // Several `departmentIds` (`departmentIds=1&departmentIds=3`, as some clients send a list)
        // mean their union, as `1|3` does.
        var ids = Set<Int>()
        for item in target.query where item.name == "departmentIds" && !item.value.isEmpty {
            for part in item.value.split(separator: "|", omittingEmptySubsequences: false) {
                guard let id = Int(part), id > 0, part.allSatisfy(\.isASCIIDigit) else {
                    throw Problem(
                        .invalidParameter, "departmentIds must be department IDs joined by '|', such as 1|11.",
                        parameter: "departmentIds")
                }
                ids.insert(id)
            }
        }
        let departmentIds = ids.sorted()
        var metadataDate: String?
        if let text = target.value(of: "metadataDate"), !text.isEmpty {
            guard CalendarDate(parsing: text) != nil else {
                // The Met's own answer, a bare JSON string (docs/MET-API.md §2).
                let body = Array(#""Date not valid. Dates must be in the format YYYY-MM-DD e.g. 1987-05-03""#.utf8)
                return .answer(
                    Response(
                        status: 400, headers: ["Content-Type": Response.jsonContentType, "Cache-Control": "no-store"],
                        body: body))
            }
            metadataDate = text
        }
        return .resource(
            .objectList(departmentIds: departmentIds, metadataDate: metadataDate),
            Presentation(route, for: request))
    }

    /// The Met-compatible search: the Met's parameters (unknown ones dropped, as the Met ignores
    /// them) in canonical order, through the cache; the body goes out byte for byte. Values go to
    /// the Met as sent (`isHighlight=True`, which the Met ignores, included). A repeated term
    /// filter (`medium=Paintings&medium=Ceramics`, as some clients send a list) is its terms joined
    /// by `|` (sorted, each once, empty ones dropped), the Met's way of asking for several; any
    /// other repeated parameter keeps its last value.
    static func mirrorSearchResource(_ api: SearchAPI, _ target: RequestTarget) -> MetResource {
        var known = SearchQuery.booleanFilters.union(SearchQuery.termFilters).union([
            "departmentId", "dateBegin", "dateEnd",
        ])
        if api == .v1_1 { known.formUnion(["offset", "limit"]) }
        var values: [String: String] = [:]
        var terms: [String: Set<Substring>] = [:]
        var repeated = Set<String>()
        for item in target.query where known.contains(item.name) {
            if values[item.name] != nil { repeated.insert(item.name) }
            values[item.name] = item.value
            if SearchQuery.termFilters.contains(item.name) {
                terms[item.name, default: []].formUnion(item.value.split(separator: "|"))
            }
        }
        // Several values of a term filter: their terms, sorted (one key for any order), once each.
        for name in repeated where SearchQuery.termFilters.contains(name) {
            values[name] = (terms[name] ?? []).sorted().joined(separator: "|")
        }
        let items = values.map { RequestTarget.QueryItem(name: $0.key, value: $0.value) }
        return .search(api, filters: items, q: target.value(of: "q"))
    }
}
