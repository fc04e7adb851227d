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
    /// `/public/collection/v1/objects/{id}`.
    case mirrorObject(String)
    /// `/public/collection/v1/objects`.
    case mirrorObjectList
    /// `/public/collection/v1/departments`.
    case mirrorDepartments
    /// `/public/collection/v1/search` or `/public/collection/v1.1/search`.
    case mirrorSearch(SearchAPI)

    /// The route for `path`, or nil when none matches. Trailing slashes do not match.
    init?(path: String) {
        switch path {
        case "/health": self = .health
        case "/openapi.yaml": self = .openAPI
        case "/departments": self = .departments
        case "/search": self = .search
        case "/widget/timeline": self = .widgetTimeline
        case "/open": self = .open(nil)
        case SearchAPI.v1.path: self = .mirrorSearch(.v1)
        case SearchAPI.v1_1.path: self = .mirrorSearch(.v1_1)
        case MetResource.basePath + "/objects": self = .mirrorObjectList
        case MetResource.basePath + "/departments": self = .mirrorDepartments
        default:
            if let id = Self.lastSegment(of: path, after: "/objects/") {
                self = .object(id)
            } else if let id = Self.lastSegment(of: path, after: "/open/") {
                self = .open(id)
            } else if let id = Self.lastSegment(of: path, after: MetResource.basePath + "/objects/") {
                self = .mirrorObject(id)
            } else {
                return nil
            }
        }
    }

    /// Whether this route speaks the Met's own dialect (bodies and statuses as the Met sends them).
    var isMirror: Bool {
        switch self {
        case .mirrorObject, .mirrorObjectList, .mirrorDepartments, .mirrorSearch: true
        default: false
        }
    }

    private static func lastSegment(of path: String, after prefix: String) -> String? {
        guard path.hasPrefix(prefix) else { return nil }
        let segment = path.dropFirst(prefix.count)
        guard !segment.isEmpty, !segment.contains("/") else { return nil }
        return String(segment)
    }
}
