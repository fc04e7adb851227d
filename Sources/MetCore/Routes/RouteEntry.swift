import MetEngine

/// One route of the server, declared once: the paths it matches, the methods it answers, how
/// `/metrics` labels it, which dialect its errors speak, and the function from a request to its
/// answer (validation included). `RouteTable.entries` lists every route; the table does the rest
/// (404, 405 with `Allow`, OPTIONS, HEAD).
struct RouteEntry: Sendable {
    /// The paths a route matches, on the decoded path alone (methods and parameters are checked
    /// afterwards, so an unknown path is a 404 and a known path with another method a 405).
    /// Trailing slashes never match.
    enum Paths: Sendable {
        /// These paths exactly.
        case exact([String])
        /// `prefix{segment}suffix`, with one non-empty segment without `/`, handed to the route
        /// unparsed (`RouteRequest.segment`).
        case segment(prefix: String, suffix: String = "")
        /// `prefix{rest}`: everything after the prefix, `/` included, non-empty, handed to the
        /// route unparsed (`RouteRequest.segment`); tried after every segment pattern.
        case rest(prefix: String)
    }

    /// The methods a route answers besides OPTIONS (a CORS preflight, answered by the table).
    enum Methods: Sendable {
        /// GET and HEAD: a HEAD is a GET whose body is not sent.
        case reading
        /// DELETE only.
        case deleting

        /// `Allow`'s value.
        var allowed: String {
            switch self {
            case .reading: "GET, HEAD, OPTIONS"
            case .deleting: "DELETE, OPTIONS"
            }
        }

        /// The methods to use instead of one that is not allowed, for the 405's detail.
        var use: String {
            switch self {
            case .reading: "GET or HEAD"
            case .deleting: "DELETE"
            }
        }

        func allows(_ method: String) -> Bool {
            switch self {
            case .reading: method == "GET" || method == "HEAD"
            case .deleting: method == "DELETE"
            }
        }
    }

    /// The function from a validated-as-it-goes request to its answer: a `Problem` thrown is the
    /// answer to a request the route cannot serve as asked.
    typealias Answering = @Sendable (RouteRequest, RouteServices) throws(Problem) -> Answer

    let paths: Paths
    let methods: Methods
    /// How `/metrics` labels the route.
    let label: MetricRoute
    /// Whether the route speaks the Met's own dialect (bodies and statuses as the Met sends them,
    /// `MetDialect`), as the mirror does.
    let metDialect: Bool
    let answer: Answering

    init(
        _ paths: Paths, methods: Methods = .reading, label: MetricRoute, metDialect: Bool = false,
        answer: @escaping Answering
    ) {
        self.paths = paths
        self.methods = methods
        self.label = label
        self.metDialect = metDialect
        self.answer = answer
    }
}
