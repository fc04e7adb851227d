import Foundation
import MetCore

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
    /// (pretty-printed when `pretty`), or the problem on standard error. Returns the exit status:
    /// 0, or 1 when the route answered an error.
    public static func run(target: String, service: MetService, pretty: Bool) async -> Int32 {
        let response = await service.response(to: .get(target))
        guard (200..<300).contains(response.status) else {
            FileHandle.standardError.write(Data(response.body + [0x0A]))
            return 1
        }
        var output = response.body
        if pretty, let object = try? JSONSerialization.jsonObject(with: Data(response.body)),
            let formatted = try? JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys])
        {
            output = [UInt8](formatted)
        }
        FileHandle.standardOutput.write(Data(output + [0x0A]))
        return 0
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
    /// Flags named in `known` become query items; other flags (with their values) are server
    /// flags; the rest are positional.
    static func split(_ arguments: [String], known: Set<String>) throws(ConfigurationError) -> (
        items: [RequestTarget.QueryItem], server: [String], positional: [String]
    ) {
        var items: [RequestTarget.QueryItem] = []
        var server: [String] = []
        var positional: [String] = []
        var remaining = arguments[...]
        while let argument = remaining.popFirst() {
            guard argument.hasPrefix("--") else {
                positional.append(argument)
                continue
            }
            let parts = argument.dropFirst(2).split(separator: "=", maxSplits: 1).map(String.init)
            let name = parts.first ?? ""
            guard let value = parts.count > 1 ? parts[1] : remaining.popFirst() else {
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
