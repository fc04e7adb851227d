import MetEngine

/// A validated `/search` request: the query and the Met's filters in canonical form, paging,
/// sort, projection and how long to wait for the upstream; or, with `source=local`, a search of
/// the records this server holds (`LocalSearchHandler`), which may also ask for facets.
public struct SearchQuery: Sendable, Hashable {
    /// Where the results come from: the Met's search (default), or this server's index.
    public enum Source: String, Sendable {
        case met
        case local
    }

    /// The search term: required and non-empty for the Met; may be empty for local search.
    public var q: String
    public var source: Source
    /// The facets to count (local search only), in the order asked.
    public var facets: [SearchFacet]
    /// The version of the local index a result was worked out at (`at`, which a local page's `next`
    /// carries), so that later pages come from the same result while the index changes.
    public var indexVersion: Int64?
    /// The Met's filters by their own names, values normalised (`true`/`false`, plain integers),
    /// sorted by name. Always holds `hasImages` (default `true`).
    public var filters: [RequestTarget.QueryItem]
    /// Index of the first hit of the page in the whole ID list. Default 0.
    public var offset: Int
    /// Hits per page, 1…100. Default 20.
    public var limit: Int
    /// The order of the results. Default relevance (the Met's order).
    public var sort: SearchSort
    /// Members to keep in each object, or nil for whole records.
    public var fields: Set<String>?
    /// How long to wait for uncached objects before answering with `pending`, in seconds.
    public var wait: Double
    /// Whether `wait` was given (so `next` repeats it).
    var waitGiven: Bool
    /// Whether the page may become the latest results (`store`, default true). Only a GET of the
    /// first page replaces them: the router clears this for HEAD, and `replacesStore` checks the
    /// offset.
    public var store: Bool

    /// The default page size.
    public static let defaultLimit = 20
    /// The largest page size.
    public static let maxLimit = 100
    /// The default wait for uncached objects, in milliseconds.
    public static let defaultWaitMilliseconds = WaitParameter.defaultMilliseconds
    /// The longest wait a client may ask for, in milliseconds.
    public static let maxWaitMilliseconds = WaitParameter.maxMilliseconds

    /// The boolean filters, as the Met names them.
    package static let booleanFilters: Set<String> = [
        "isHighlight", "title", "tags", "isOnView", "artistOrCulture", "hasImages",
    ]
    /// The filters whose values are terms joined by `|`.
    static let termFilters: Set<String> = ["medium", "geoLocation"]
    /// The same, by name: the order their values are validated and kept in.
    private static let sortedBooleanFilters = booleanFilters.sorted()
    private static let sortedTermFilters = termFilters.sorted()
    /// The parameters only `/search` itself takes, for local search.
    static let localParameters: Set<String> = ["source", "facets", "isPublicDomain", "at"]
    /// Every parameter a search of the Met takes (`themet search` and `themet timeline` split
    /// their arguments by it).
    package static let parameters: Set<String> =
        booleanFilters.union(termFilters).union([
            "q", "departmentId", "dateBegin", "dateEnd", "offset", "limit", "sort", "fields", "wait", "store",
        ])

    /// Whether this page replaces the latest results: `store` and the first page (offset 0).
    var replacesStore: Bool { store && offset == 0 }

    /// What identifies a search as a source of the latest results (`SharedStore.offer`): what
    /// decides the objects of its first page. Not `fields` or `wait`, which do not change the
    /// records stored. Cheap to make and hash: it is made on every first-page search hit.
    struct StoreSource: Hashable, Sendable {
        var q: String
        var source: Source
        var filters: [RequestTarget.QueryItem]
        var sort: SearchSort
        var limit: Int
    }

    /// This search as a source of the latest results.
    var storeSource: StoreSource { StoreSource(q: q, source: source, filters: filters, sort: sort, limit: limit) }

    /// Whether results must have an image (`hasImages`, default true).
    public var requiresImages: Bool { filters.first { $0.name == "hasImages" }?.value != "false" }

    /// Validates the query items of a `/search` request; every problem names its parameter.
    ///
    /// - Parameter allowingLocal: whether `source`, `facets` and `isPublicDomain` may be given
    ///   (`/search` itself; the widget, `/random` and purges search the Met only).
    public init(_ target: RequestTarget, allowingLocal: Bool = false) throws(Problem) {
        try target.allowOnly(
            allowingLocal ? Self.parameters.union(Self.localParameters) : Self.parameters,
            known: "/search takes q, the Met's filters (isHighlight, title, tags, isOnView, artistOrCulture, "
                + "hasImages, departmentId, medium, geoLocation, dateBegin, dateEnd), offset, limit, sort, fields, "
                + (allowingLocal
                    ? "wait, store, source, and with source=local facets, isPublicDomain and at." : "wait and store."))
        func value(_ name: String) -> String? { target.value(of: name) }

        source = .met
        if let text = value("source") {
            guard let source = Source(rawValue: text) else {
                throw Problem(.invalidParameter, "source must be met or local.", parameter: "source")
            }
            self.source = source
        }
        let q = value("q") ?? ""
        guard source == .local || !q.allSatisfy(\.isWhitespace) else {
            throw Problem(.invalidParameter, "q is required: the words to search for.", parameter: "q")
        }
        guard q.utf8.count <= 500 else {
            throw Problem(.invalidParameter, "q is longer than 500 bytes.", parameter: "q")
        }
        self.q = q
        guard source == .met || q.split(whereSeparator: \.isWhitespace).count <= LocalSearch.maxWords else {
            throw Problem(
                .invalidParameter,
                "q has more than \(LocalSearch.maxWords) words: local search takes at most that many.",
                parameter: "q")
        }
        facets = []
        if let text = value("facets") {
            guard source == .local else {
                throw Problem(
                    .invalidParameter, "facets needs source=local: the Met's search counts nothing.",
                    parameter: "facets")
            }
            for name in text.split(separator: ",", omittingEmptySubsequences: false) {
                guard let facet = SearchFacet(rawValue: String(name)), !facets.contains(facet) else {
                    throw Problem(
                        .invalidParameter,
                        "facets must name some of \(SearchFacet.allCases.map(\.rawValue).joined(separator: ", ")), "
                            + "each once, joined by commas.",
                        parameter: "facets")
                }
                facets.append(facet)
            }
        }

        var filters: [RequestTarget.QueryItem] = []
        for name in Self.sortedBooleanFilters {
            guard let text = value(name) else { continue }
            guard let flag = RequestTarget.boolean(text) else {
                throw Problem(.invalidParameter, "\(name) must be true or false.", parameter: name)
            }
            filters.append(.init(name: name, value: String(flag)))
        }
        if value("hasImages") == nil { filters.append(.init(name: "hasImages", value: "true")) }
        indexVersion = nil
        if let text = value("at") {
            guard source == .local, (1...18).contains(text.utf8.count),
                text.utf8.allSatisfy({ (0x30...0x39).contains($0) }), let version = Int64(text)
            else {
                throw Problem(
                    .invalidParameter, "at must be the version a local page's next link gives, with source=local.",
                    parameter: "at")
            }
            indexVersion = version
        }
        if let text = value("isPublicDomain") {
            guard source == .local else {
                throw Problem(
                    .invalidParameter, "isPublicDomain needs source=local: the Met's search has no such filter.",
                    parameter: "isPublicDomain")
            }
            guard let flag = RequestTarget.boolean(text) else {
                throw Problem(.invalidParameter, "isPublicDomain must be true or false.", parameter: "isPublicDomain")
            }
            filters.append(.init(name: "isPublicDomain", value: String(flag)))
        }
        if let text = value("departmentId") {
            filters.append(.init(name: "departmentId", value: String(try Self.departmentID(text))))
        }
        for name in Self.sortedTermFilters {
            guard let text = value(name) else { continue }
            let terms = text.split(separator: "|", omittingEmptySubsequences: false)
            guard text.utf8.count <= 500, terms.allSatisfy({ !$0.allSatisfy(\.isWhitespace) }) else {
                throw Problem(
                    .invalidParameter,
                    "\(name) must be one or more non-empty terms joined by '|', such as Paintings|Silk.",
                    parameter: name)
            }
            filters.append(.init(name: name, value: text))
        }
        switch (value("dateBegin"), value("dateEnd")) {
        case (nil, nil):
            break
        case (let begin?, let end?):
            guard let first = Self.integer(begin, allowingSign: true) else {
                throw Problem(.invalidParameter, "dateBegin must be a year (negative for BCE).", parameter: "dateBegin")
            }
            guard let last = Self.integer(end, allowingSign: true) else {
                throw Problem(.invalidParameter, "dateEnd must be a year (negative for BCE).", parameter: "dateEnd")
            }
            guard first <= last else {
                throw Problem(.invalidParameter, "dateEnd must not be before dateBegin.", parameter: "dateEnd")
            }
            filters.append(.init(name: "dateBegin", value: String(first)))
            filters.append(.init(name: "dateEnd", value: String(last)))
        case (nil, _):
            throw Problem(
                .invalidParameter, "dateEnd needs dateBegin: the Met drops a range given by one end.",
                parameter: "dateBegin")
        case (_, nil):
            throw Problem(
                .invalidParameter, "dateBegin needs dateEnd: the Met drops a range given by one end.",
                parameter: "dateEnd")
        }
        filters.sort { $0.name < $1.name }
        self.filters = filters

        offset = 0
        if let text = value("offset") {
            guard let number = Self.integer(text), number <= 1_000_000 else {
                throw Problem(.invalidParameter, "offset must be an integer from 0 to 1000000.", parameter: "offset")
            }
            offset = number
        }
        limit = Self.defaultLimit
        if let text = value("limit") {
            guard let number = Self.integer(text), (1...Self.maxLimit).contains(number) else {
                throw Problem(
                    .invalidParameter, "limit must be an integer from 1 to \(Self.maxLimit).", parameter: "limit")
            }
            limit = number
        }
        sort = .relevance
        if let text = value("sort") {
            guard let order = SearchSort(rawValue: text) else {
                throw Problem(
                    .invalidParameter,
                    "sort must be one of \(SearchSort.allCases.map(\.rawValue).joined(separator: ", ")).",
                    parameter: "sort")
            }
            sort = order
        }
        fields = try value("fields").map { (text) throws(Problem) in try FieldList(parsing: text).names }
        wait = try WaitParameter.seconds(value("wait"))
        waitGiven = value("wait") != nil
        store = true
        if let text = value("store") {
            guard let flag = RequestTarget.boolean(text) else {
                throw Problem(.invalidParameter, "store must be true or false.", parameter: "store")
            }
            store = flag
        }
    }

    /// The query as `/search` echoes it: `q`, then the filters with typed values.
    func writeEcho(to json: inout JSONWriter) {
        json.beginObject()
        json.member("q", string: q)
        for filter in filters {
            json.key(filter.name)
            if Self.booleanFilters.contains(filter.name) || filter.name == "isPublicDomain" {
                json.bool(filter.value == "true")
            } else if let number = Int(filter.value), !Self.termFilters.contains(filter.name) {
                json.int(number)
            } else {
                json.string(filter.value)
            }
        }
        json.endObject()
    }

    /// The `/search` URL of the page at `offset`, with the same query, sort, fields and wait.
    func url(offset: Int) -> String {
        var items = [RequestTarget.QueryItem(name: "q", value: q)]
        if source == .local { items.append(.init(name: "source", value: source.rawValue)) }
        items += filters.filter { !($0.name == "hasImages" && $0.value == "true") }
        if !facets.isEmpty { items.append(.init(name: "facets", value: facets.map(\.rawValue).joined(separator: ","))) }
        if let indexVersion { items.append(.init(name: "at", value: String(indexVersion))) }
        items.append(.init(name: "offset", value: String(offset)))
        items.append(.init(name: "limit", value: String(limit)))
        if sort != .relevance { items.append(.init(name: "sort", value: sort.rawValue)) }
        if let fields { items.append(.init(name: "fields", value: fields.sorted().joined(separator: ","))) }
        if waitGiven { items.append(.init(name: "wait", value: String(Int((wait * 1_000).rounded())))) }
        return PercentEncoding.target(path: "/search", query: items, keeping: [.comma, .pipe])
    }

    /// A `departmentId` value: a positive integer of at most 9 digits (leading zeros allowed, as
    /// the Met reads it). Throws `invalid_parameter` naming `departmentId`.
    static func departmentID(_ text: String) throws(Problem) -> Int {
        guard let id = integer(text), id > 0 else {
            throw Problem(
                .invalidParameter, "departmentId must be a department ID (a positive integer; see /departments).",
                parameter: "departmentId")
        }
        return id
    }

    /// ASCII digits with an optional leading `-` (when allowed), at most 9 digits.
    private static func integer(_ text: String, allowingSign: Bool = false) -> Int? {
        let digits = allowingSign && text.hasPrefix("-") ? text.utf8.dropFirst() : text.utf8[...]
        guard (1...9).contains(digits.count), digits.allSatisfy({ (0x30...0x39).contains($0) }) else { return nil }
        return Int(text)
    }
}
