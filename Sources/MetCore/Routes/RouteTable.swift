import MetEngine

/// Every route of the server, one entry each, and what being in the table gives a route: the size
/// limits, the target's parsing, the 404 for an unknown path, the 405 with `Allow`, the answer to a
/// CORS preflight, the metric label, and errors in the route's dialect. Any thread; no state but
/// the index built once.
///
/// Adding a route: a file under `Routes/` declaring its `RouteEntry`, and its line below.
struct RouteTable: Sendable {
    /// The routes. Exact paths are looked up at once; segment patterns are tried in this order.
    static let entries: [RouteEntry] = [
        CollectionRoutes.object, CollectionRoutes.objectBatch, CollectionRoutes.departments,
        SearchRoutes.search, WidgetRoutes.timeline,
        OpenRoutes.byID, OpenRoutes.byLink,
        RandomRoutes.random,
        IIIFRoutes.manifest,
        IIIFRoutes.image,
        ImageRoutes.file,
        ExplorerRoutes.files,
        MirrorRoutes.object, MirrorRoutes.objectList, MirrorRoutes.departments, MirrorRoutes.searchV1,
        MirrorRoutes.searchV11,
        ChangeRoutes.changes,
        CacheRoutes.purgeObject, CacheRoutes.purgeSearch, CacheRoutes.snapshot,
        ServiceRoutes.health, ServiceRoutes.metrics, ServiceRoutes.openAPI,
    ]

    let limits: RequestLimits
    /// Index into `entries` of each exact path.
    private let exact: [String: Int]
    /// The segment patterns, in table order, then the rest patterns, in table order, as UTF-8
    /// bytes.
    private let segments: [SegmentPattern]

    /// `prefix{segment}suffix` (or `prefix{rest}`) of the entry at index `entry`.
    private struct SegmentPattern {
        let entry: Int
        let prefix: [UInt8]
        let suffix: [UInt8]
        /// The variable part may hold `/` (`RouteEntry.Paths.rest`).
        let spansSegments: Bool

        /// The `{segment}` of a path's UTF-8 `bytes`: non-empty, without `/` unless the pattern spans
        /// segments; nil when they do not match.
        func segment(of bytes: UnsafeBufferPointer<UInt8>) -> String? {
            guard bytes.count > prefix.count + suffix.count, bytes.prefix(prefix.count).elementsEqual(prefix),
                bytes.suffix(suffix.count).elementsEqual(suffix)
            else { return nil }
            let segment = UnsafeBufferPointer(rebasing: bytes[prefix.count..<(bytes.count - suffix.count)])
            guard spansSegments || !segment.contains(UInt8(ascii: "/")) else { return nil }
            return String(decoding: segment, as: UTF8.self)
        }
    }

    init(limits: RequestLimits) {
        self.limits = limits
        var exact: [String: Int] = [:]
        var segments: [SegmentPattern] = []
        var rests: [SegmentPattern] = []
        for (index, entry) in Self.entries.enumerated() {
            switch entry.paths {
            case .exact(let paths):
                for path in paths {
                    precondition(exact.updateValue(index, forKey: path) == nil, "\(path) is declared twice")
                }
            case .segment(let prefix, let suffix):
                segments.append(
                    SegmentPattern(
                        entry: index, prefix: Array(prefix.utf8), suffix: Array(suffix.utf8), spansSegments: false))
            case .rest(let prefix):
                rests.append(SegmentPattern(entry: index, prefix: Array(prefix.utf8), suffix: [], spansSegments: true))
            }
        }
        self.exact = exact
        self.segments = segments + rests
    }

    /// The index in `entries` of the route `path` matches, with its segment (empty for an exact
    /// path); nil for none.
    func match(_ path: String) -> (entry: Int, segment: String)? {
        if let index = exact[path] { return (index, "") }
        var path = path
        path.makeContiguousUTF8()
        return path.utf8.withContiguousStorageIfAvailable { bytes in
            for index in segments.indices {
                if let segment = segments[index].segment(of: bytes) { return (segments[index].entry, segment) }
            }
            return nil
        } ?? nil
    }

    /// The answer to `request`, with how `/metrics` labels its route (`.none` when no route
    /// matched). A request that cannot be served as asked gets its problem document, or under the
    /// mirror's prefix the Met's own kind of answer (`MetDialect`).
    ///
    /// - Parameters:
    ///   - claim: whose request it is, for the pacer.
    ///   - forwarded: the client behind a trusted proxy, if any.
    ///   - request: moved into the route's `RouteRequest`, not copied.
    func answer(
        _ request: consuming Request, services: RouteServices, claim: UpstreamClaim, forwarded: RequestClient?
    ) -> (Answer, MetricRoute) {
        var label = MetricRoute.none
        let isMirror = MetDialect.isMirror(request.target)
        do {
            return (try routed(request, services, claim, forwarded, label: &label), label)
        } catch {
            return (.ready(isMirror ? MetDialect.response(for: error) : error.response), label)
        }
    }

    /// The 404 for a path no route has (a route whose pattern matched may find so too).
    static func noRoute(_ path: String) -> Problem {
        Problem(.routeNotFound, "There is no route \(path.prefix(200)); see /openapi.yaml.")
    }

    private func routed(
        _ request: consuming Request, _ services: RouteServices, _ claim: UpstreamClaim, _ forwarded: RequestClient?,
        label: inout MetricRoute
    ) throws(Problem) -> Answer {
        try checkLimits(request)
        var target = try RequestTarget(parsing: request.target)
        // A cache-buster (`_=1733040000000`, jQuery's `cache: false` and others) means nothing
        // here: every route ignores it, and it is no part of any key.
        if target.query.contains(where: { $0.name == "_" }) { target.query.removeAll { $0.name == "_" } }
        guard let (index, segment) = match(target.path) else {
            throw Self.noRoute(target.path)
        }
        let entry = Self.entries[index]
        label = entry.label
        guard entry.methods.allows(request.method) else {
            if request.method == "OPTIONS" {
                return .ready(CORSLayer.preflight(request, methods: entry.methods.allowed))
            }
            throw Problem(
                .methodNotAllowed, "\(request.method.prefix(20)) is not allowed here; use \(entry.methods.use).",
                headers: ["Allow": entry.methods.allowed])
        }
        return try entry.answer(
            RouteRequest(
                request: request, target: target, segment: segment, metDialect: entry.metDialect, claim: claim,
                forwarded: forwarded),
            services)
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

}
