/// The server's routes, matched on the decoded path alone (methods and parameters are checked
/// afterwards, so an unknown path is a 404 and a known path with another method a 405).
enum Route: Equatable {
    case health
    case openAPI
    case departments
    /// `/search`: hydrated search.
    case search
    /// `/widget/timeline`.
    case widgetTimeline
    /// `/open?url=themet://{id}` (nil) or `/open/{id}` (the ID segment, unparsed).
    case open(String?)
    /// `/objects/{id}`, with the ID segment still unparsed.
    case object(String)
    /// `/objects?ids=…`: several records at once.
    case objectBatch
    /// `/random`: a random object.
    case random
    /// `/iiif/{id}/manifest.json`, with the ID segment still unparsed.
    case iiifManifest(String)
    /// `/` and the explorer's files.
    case explorer(ExplorerAsset)
    /// `/public/collection/v1/objects/{id}`.
    case mirrorObject(String)
    /// `/public/collection/v1/objects`.
    case mirrorObjectList
    /// `/public/collection/v1/departments`.
    case mirrorDepartments
    /// `/public/collection/v1/search` or `/public/collection/v1.1/search`.
    case mirrorSearch(SearchAPI)
    /// `/cache/objects/{id}` (DELETE: purge), with the ID segment still unparsed.
    case purgeObject(String)
    /// `/cache/search` (DELETE: purge a search's ID lists).
    case purgeSearch
    /// `/metrics`: Prometheus text.
    case metrics

    /// The route for `path`, or nil when none matches. Trailing slashes do not match.
    init?(path: String) {
        // The busiest route first: no fixed path below starts with `/objects/`.
        if let id = Self.lastSegment(of: path, after: "/objects/") {
            self = .object(id)
            return
        }
        switch path {
        case "/health": self = .health
        case "/metrics": self = .metrics
        case "/openapi.yaml": self = .openAPI
        case "/departments": self = .departments
        case "/search": self = .search
        case "/objects": self = .objectBatch
        case "/random": self = .random
        case "/", "/explorer.js", "/explorer.css", "/favicon.svg":
            guard let asset = ExplorerAsset(rawValue: path) else { return nil }
            self = .explorer(asset)
        case "/widget/timeline": self = .widgetTimeline
        case "/open": self = .open(nil)
        case Self.mirrorSearchV1: self = .mirrorSearch(.v1)
        case Self.mirrorSearchV11: self = .mirrorSearch(.v1_1)
        case Self.mirrorObjectListPath: self = .mirrorObjectList
        case Self.mirrorDepartmentsPath: self = .mirrorDepartments
        case "/cache/search": self = .purgeSearch
        default:
            if let id = Self.lastSegment(of: path, after: "/open/") {
                self = .open(id)
            } else if let id = Self.lastSegment(of: path, after: Self.mirrorObjectPrefix) {
                self = .mirrorObject(id)
            } else if let id = Self.lastSegment(of: path, after: "/cache/objects/") {
                self = .purgeObject(id)
            } else if let id = Self.iiifSegment(of: path) {
                self = .iiifManifest(id)
            } else {
                return nil
            }
        }
    }

    /// Whether this route removes entries (DELETE only, and only for loopback clients or the
    /// admin token).
    var isPurge: Bool {
        switch self {
        case .purgeObject, .purgeSearch: true
        default: false
        }
    }

    /// How `/metrics` labels the route.
    var metricRoute: MetricRoute {
        switch self {
        case .health: .health
        case .openAPI: .openapi
        case .metrics: .metrics
        case .departments: .departments
        case .search: .search
        case .widgetTimeline: .widget
        case .open: .open
        case .object: .object
        case .objectBatch: .objects
        case .random: .random
        case .iiifManifest: .iiif
        case .explorer: .explorer
        case .mirrorObject, .mirrorObjectList, .mirrorDepartments, .mirrorSearch: .mirror
        case .purgeObject, .purgeSearch: .purge
        }
    }

    /// The methods this route answers, for `Allow`.
    var allowedMethods: String { isPurge ? "DELETE, OPTIONS" : CORSLayer.allowedMethods }

    /// Whether this route speaks the Met's own dialect (bodies and statuses as the Met sends them).
    var isMirror: Bool {
        switch self {
        case .mirrorObject, .mirrorObjectList, .mirrorDepartments, .mirrorSearch: true
        default: false
        }
    }

    private static let manifestSuffix = "/manifest.json"
    /// What every path of the mirror starts with (the Met's own prefix).
    static let mirrorPrefix = "/public/collection/"
    // The mirror's paths, built once (matching runs on every request).
    private static let mirrorSearchV1 = SearchAPI.v1.path
    private static let mirrorSearchV11 = SearchAPI.v1_1.path
    private static let mirrorObjectListPath = MetResource.basePath + "/objects"
    private static let mirrorDepartmentsPath = MetResource.basePath + "/departments"
    private static let mirrorObjectPrefix = MetResource.basePath + "/objects/"

    /// The `{id}` of `/iiif/{id}/manifest.json`, matched on bytes.
    private static func iiifSegment(of path: String) -> String? {
        let bytes = path.utf8
        let suffix = manifestSuffix.utf8
        guard bytes.count > suffix.count, bytes.reversed().starts(with: suffix.reversed()) else { return nil }
        return lastSegment(of: String(Substring(bytes.dropLast(suffix.count))), after: "/iiif/")
    }

    private static func lastSegment(of path: String, after prefix: String) -> String? {
        let bytes = path.utf8
        guard bytes.starts(with: prefix.utf8) else { return nil }
        let segment = bytes.dropFirst(prefix.utf8.count)
        guard !segment.isEmpty, !segment.contains(UInt8(ascii: "/")) else { return nil }
        return String(Substring(segment))
    }
}
