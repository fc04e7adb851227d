import MetEngine

/// The Met-compatible mirror under the Met's own paths (`/public/collection/v1/…`): bodies and
/// statuses as the Met sends them, errors in its dialect (`MetDialect`), through the cache.
enum MirrorRoutes {
    /// What every path of the mirror starts with (the Met's own prefix).
    static let prefix = "/public/collection/"

    /// `/public/collection/v1/objects/{id}`. IDs are read as the Met reads them: any run of
    /// digits (leading zeros included) is an ID; a sign or a value no object can have is "not
    /// found", and anything else "could not parse", each answered with the Met's own body without
    /// asking it.
    static let object = RouteEntry(
        .segment(prefix: MetResource.basePath + "/objects/"), label: .mirror, metDialect: true
    ) { request, services throws(Problem) in
        let text = request.segment
        let digits = text.first == "-" ? text.dropFirst() : text[...]
        let isInteger = !digits.isEmpty && digits.allSatisfy(\.isASCIIDigit)
        if isInteger, text.first != "-", let id = Int(digits), (1...ObjectID.maximum).contains(id) {
            return resource(.object(id: id), request, services)
        }
        let (status, message) = isInteger ? (404, "ObjectID not found") : (400, "could not parse objectID")
        return .ready(MetDialect.response(status: status, message: message))
    }

    /// `/public/collection/v1/objects`: every ID, or a department's, or those changed since a date.
    /// Several `departmentIds` (`departmentIds=1&departmentIds=3`, as some clients send a list)
    /// mean their union, as `1|3` does.
    static let objectList = RouteEntry(
        .exact([MetResource.basePath + "/objects"]), label: .mirror, metDialect: true
    ) { request, services throws(Problem) in
        var ids = Set<Int>()
        for item in request.target.query where item.name == "departmentIds" && !item.value.isEmpty {
            for part in item.value.split(separator: "|", omittingEmptySubsequences: false) {
                guard let id = Int(part), id > 0, part.allSatisfy(\.isASCIIDigit) else {
                    throw Problem(
                        .invalidParameter, "departmentIds must be department IDs joined by '|', such as 1|11.",
                        parameter: "departmentIds")
                }
                ids.insert(id)
            }
        }
        var metadataDate: String?
        if let text = request.target.value(of: "metadataDate"), !text.isEmpty {
            guard CalendarDate(parsing: text) != nil else {
                // The Met's own answer, a bare JSON string (docs/MET-API.md §2).
                let body = Array(#""Date not valid. Dates must be in the format YYYY-MM-DD e.g. 1987-05-03""#.utf8)
                return .ready(
                    Response(
                        status: 400, headers: ["Content-Type": Response.jsonContentType, "Cache-Control": "no-store"],
                        body: body))
            }
            metadataDate = text
        }
        return resource(.objectList(departmentIds: ids.sorted(), metadataDate: metadataDate), request, services)
    }

    /// `/public/collection/v1/departments`.
    static let departments = RouteEntry(
        .exact([MetResource.basePath + "/departments"]), label: .mirror, metDialect: true
    ) { request, services throws(Problem) in
        resource(.departments, request, services)
    }

    /// `/public/collection/v1/search`.
    static let searchV1 = search(.v1)
    /// `/public/collection/v1.1/search`.
    static let searchV11 = search(.v1_1)

    private static func search(_ api: SearchAPI) -> RouteEntry {
        RouteEntry(.exact([api.path]), label: .mirror, metDialect: true) { request, services throws(Problem) in
            if api == .v1, request.target.value(of: "q") == nil {
                // The Met's v1 answers 502 without q (docs/MET-API.md §5): say why here instead of asking
                // it. An empty `q=` goes to the Met, which answers it (with highlights: OA#36).
                throw Problem(
                    .invalidParameter, "q is required: the Met's v1 search fails without it.", parameter: "q")
            }
            return resource(searchResource(api, request.target), request, services)
        }
    }

    /// The Met-compatible search: the Met's parameters (unknown ones dropped, as the Met ignores
    /// them) in canonical order, through the cache; the body goes out byte for byte. Values go to
    /// the Met as sent (`isHighlight=True`, which the Met ignores, included). A repeated term
    /// filter (`medium=Paintings&medium=Ceramics`, as some clients send a list) is its terms joined
    /// by `|` (sorted, each once, empty ones dropped), the Met's way of asking for several; any
    /// other repeated parameter keeps its last value.
    static func searchResource(_ api: SearchAPI, _ target: RequestTarget) -> MetResource {
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

    /// One cache entry, the Met's body byte for byte.
    private static func resource(_ resource: MetResource, _ request: RouteRequest, _ services: RouteServices) -> Answer
    {
        services.start(
            ResourcePipeline(resource: resource, presentation: request.presentation(), presenter: services.presenter),
            for: request)
    }
}
