import Foundation
import MetCore
import MetEngine

/// A subcommand of `themet` that answers one request through the core, without a server, and
/// prints what the route returns: `search`, `timeline`, `open`.
public protocol RouteCommand {
    /// The usage text.
    static var usage: String { get }

    /// Splits the arguments into the request target and the server flags (`--upstream`, …).
    /// Throws a `ConfigurationError` naming what is wrong.
    static func parse(_ arguments: [String]) throws(ConfigurationError) -> (target: String, server: [String])
}

/// The `RouteCommand`s by name.
public enum RouteCommands {
    /// The command called `name`, if there is one.
    public static func named(_ name: String) -> (any RouteCommand.Type)? {
        switch name {
        case "search": SearchCommand.self
        case "timeline": TimelineCommand.self
        case "open": OpenCommand.self
        default: nil
        }
    }

    /// Answers `target` with `service` and writes the outcome: a 2xx body on standard output
    /// (re-indented by `JSONPretty` when `pretty`: the members in the server's order, slashes
    /// unescaped), or one readable line on standard error. Returns the exit status: 0; 64 when
    /// the request itself is wrong (a 400: a bad flag value, a malformed ID); 1 when the route
    /// answered another error (not found, the Met failing).
    ///
    /// A `/search` on a terminal (`progress`) is asked in steps of at most a second, with the
    /// objects that arrived and the time so far on one line of standard error, until nothing is
    /// pending or its `wait` is spent; what then stayed pending is said on standard error.
    public static func run(target: String, service: MetService, pretty: Bool, progress: Bool) async -> Int32 {
        let response: Response
        if progress, let search = ProgressiveSearch(target) {
            response = await search.run(service)
        } else {
            response = await service.response(to: .get(target))
        }
        guard (200..<300).contains(response.status) else {
            FileHandle.standardError.write(Data("themet: \(Self.describe(response))\n".utf8))
            return response.status == 400 ? 64 : 1
        }
        let output = pretty ? JSONPretty.format(response.body) ?? response.body : response.body
        // SIGPIPE is ignored (the loops' sockets need that): a reader that has gone, such as
        // `| head`, ends the command with the status a SIGPIPE would have given, quietly.
        guard Logger.writeAll(output + [0x0A], to: 1) else { return 141 }
        if let pending = Self.pendingCount(response.body), pending > 0 {
            FileHandle.standardError.write(
                Data(
                    ("themet: \(pending) object(s) still pending: the Met has not answered for them yet (it is paced); "
                        + "ask again to get them\n").utf8))
        }
        return 0
    }

    /// A failed answer in one line: for a problem, the flag it names and its detail (`--limit:
    /// limit must be …`); else the status and what the body says.
    static func describe(_ response: Response) -> String {
        let object = (try? JSONSerialization.jsonObject(with: Data(response.body))) as? [String: Any]
        guard let detail = object?["detail"] as? String ?? object?["message"] as? String else {
            return "HTTP \(response.status)"
        }
        if let parameter = object?["parameter"] as? String {
            return "\(parameter == "q" ? "QUERY" : "--\(parameter)"): \(detail)"
        }
        return detail
    }

    /// How many IDs a page's `pending` lists; nil for a body without one.
    static func pendingCount(_ body: [UInt8]) -> Int? {
        let object = (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any]
        return (object?["pending"] as? [Any])?.count
    }
}

/// `themet timeline [--family large] [--q QUERY] [search flags]`: the widget timeline.
public enum TimelineCommand: RouteCommand {
    public static let usage = """
        usage: themet timeline [--family medium|large] [--start ISO8601] [--interval SECONDS]
                               [--q QUERY [search flags]] [server flags]

        Prints the widget timeline (GET /widget/timeline): from the latest search results kept in
        the data directory, or from a new search with --q. With --q, --wait defaults to
        \(SearchQuery.maxWaitMilliseconds) ms here: a terminal can wait for the paced upstream.
        """

    public static func parse(_ arguments: [String]) throws(ConfigurationError) -> (target: String, server: [String]) {
        let own = WidgetRequest.parameters.union(SearchQuery.parameters)
        var (items, server, positional) = try RouteArguments.split(arguments, known: own)
        if let extra = positional.first { throw ConfigurationError(flag: extra, reason: "unexpected argument") }
        // As `themet search`: a terminal can wait for the paced upstream; with the route's default
        // wait, the objects still pending would be left out of the timeline (and of the store).
        if items.contains(where: { $0.name == "q" }), !items.contains(where: { $0.name == "wait" }) {
            items.append(.init(name: "wait", value: String(SearchQuery.maxWaitMilliseconds)))
        }
        return (PercentEncoding.target(path: "/widget/timeline", query: items, keeping: [.comma, .pipe]), server)
    }
}

/// `themet open ID`: where an object's deep link leads.
public enum OpenCommand: RouteCommand {
    public static let usage = """
        usage: themet open ID [server flags]

        Prints where themet://ID leads (GET /open/ID?format=json): the detail view for
        public-domain objects, the Met's web page for the rest.
        """

    public static func parse(_ arguments: [String]) throws(ConfigurationError) -> (target: String, server: [String]) {
        let (_, server, positional) = try RouteArguments.split(arguments, known: [])
        guard positional.count == 1, let id = positional.first else {
            throw ConfigurationError(flag: "ID", reason: "expected exactly one object ID")
        }
        return ("/open/\(PercentEncoding.encode(id))?format=json", server)
    }
}

/// Splitting a subcommand's arguments.
enum RouteArguments {
    /// The flags that are `true` or `false`: standing alone (`--hasImages`), they mean `true`.
    static let booleans = SearchQuery.booleanFilters.union(["store"])

    /// Flags named in `known` become query items; other flags (with their values) are server
    /// flags; the rest are positional, and so is everything after `--`. A boolean flag (see
    /// `booleans`) takes the next argument as its value only when it is `true` or `false`;
    /// otherwise it stands alone for `true`.
    static func split(_ arguments: [String], known: Set<String>) throws(ConfigurationError) -> (
        items: [RequestTarget.QueryItem], server: [String], positional: [String]
    ) {
        var items: [RequestTarget.QueryItem] = []
        var server: [String] = []
        var positional: [String] = []
        var remaining = arguments[...]
        while let argument = remaining.popFirst() {
            if argument == "--" {
                positional += remaining
                break
            }
            guard argument.hasPrefix("--") else {
                positional.append(argument)
                continue
            }
            let parts = argument.dropFirst(2).split(separator: "=", maxSplits: 1).map(String.init)
            let name = parts.first ?? ""
            let value: String
            if parts.count > 1 {
                value = parts[1]
            } else if known.contains(name), booleans.contains(name) {
                let next = remaining.first.map { $0.lowercased() }
                value = next == "true" || next == "false" ? remaining.popFirst()! : "true"
            } else if let next = remaining.popFirst() {
                value = next
            } else {
                throw ConfigurationError(flag: argument, reason: "needs a value")
            }
            if known.contains(name) {
                items.append(.init(name: name, value: value))
            } else {
                server += ["--\(name)", value]
            }
        }
        return (items, server, positional)
    }
}
