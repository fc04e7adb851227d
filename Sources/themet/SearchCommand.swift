import Foundation
import MetCore
import MetEngine

/// `themet search QUERY [--limit N] [filters…]`: the same core search as `GET /search`, run once
/// from a terminal, for people without a front end.
public enum SearchCommand: RouteCommand {
    /// The usage text.
    public static let usage = """
        usage: themet search QUERY [--limit N] [--offset N] [--sort ORDER] [--fields A,B] [--wait MS]
                                   [--FILTER VALUE]... [server flags, such as --upstream URL|DIR]

        Runs one hydrated search and prints the response JSON (indented on a terminal, with the
        objects that arrived counted on standard error while the Met is slow). Filters are the
        Met's, by name: --hasImages false, --departmentId 11, --isHighlight (alone: true),
        --medium Paintings, --dateBegin 1700 --dateEnd 1800, ... (see GET /search in openapi.yaml).
        -- ends the flags (themet search -- --title-with-dashes).
        --wait defaults to \(SearchQuery.maxWaitMilliseconds) ms here: a terminal can wait for the paced upstream.
        Exit status: 0 for results (objects still pending are said on standard error), 1 when the
        search failed, 64 for bad arguments (each with one line on standard error).
        """

    /// Splits the arguments into the `/search` request target and the server flags.
    /// Throws a `ConfigurationError` naming the flag for a missing value or a missing QUERY.
    public static func parse(_ arguments: [String]) throws(ConfigurationError) -> (target: String, server: [String]) {
        var (items, server, positional) = try RouteArguments.split(
            arguments, known: SearchQuery.parameters.subtracting(["q"]))
        guard let query = positional.first else {
            throw ConfigurationError(flag: "QUERY", reason: "missing: what to search for")
        }
        guard positional.count == 1 else {
            throw ConfigurationError(flag: positional[1], reason: "only one QUERY; quote words that belong together")
        }
        if !items.contains(where: { $0.name == "wait" }) {
            items.append(.init(name: "wait", value: String(SearchQuery.maxWaitMilliseconds)))
        }
        items.insert(.init(name: "q", value: query), at: 0)
        return (PercentEncoding.target(path: "/search", query: items, keeping: [.comma, .pipe]), server)
    }
}
