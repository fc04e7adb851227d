import Foundation

/// `themet search QUERY [--limit N] [filters…]`: the same core search as `GET /search`, run once
/// from a terminal, for people without a front end.
public enum SearchCommand {
    /// The usage text.
    public static let usage = """
        usage: themet search QUERY [--limit N] [--offset N] [--sort ORDER] [--fields A,B] [--wait MS]
                                   [--FILTER VALUE]... [server flags, such as --upstream URL|DIR]

        Runs one hydrated search and prints the response JSON (pretty-printed on a terminal).
        Filters are the Met's, by name: --hasImages false, --departmentId 11, --isHighlight true,
        --medium Paintings, --dateBegin 1700 --dateEnd 1800, ... (see GET /search in openapi.yaml).
        --wait defaults to \(SearchQuery.maxWaitMilliseconds) ms here: a terminal can wait for the paced upstream.
        Exit status: 0 for results, 1 when the search failed (the problem is printed on standard
        error), 64 for bad arguments.
        """

    /// Splits the arguments into the `/search` request target and the server flags.
    /// Throws a `ConfigurationError` naming the flag for a missing value or a missing QUERY.
    public static func parse(_ arguments: [String]) throws(ConfigurationError) -> (target: String, server: [String]) {
        let searchParameters = SearchQuery.parameters.subtracting(["q"])
        var items: [RequestTarget.QueryItem] = []
        var server: [String] = []
        var query: String?
        var remaining = arguments[...]
        while let argument = remaining.popFirst() {
            guard argument.hasPrefix("--") else {
                guard query == nil else {
                    throw ConfigurationError(flag: argument, reason: "only one QUERY; quote words that belong together")
                }
                query = argument
                continue
            }
            let parts = argument.dropFirst(2).split(separator: "=", maxSplits: 1).map(String.init)
            let name = parts.first ?? ""
            guard let value = parts.count > 1 ? parts[1] : remaining.popFirst() else {
                throw ConfigurationError(flag: argument, reason: "needs a value")
            }
            if searchParameters.contains(name) {
                items.append(.init(name: name, value: value))
            } else {
                server += ["--\(name)", value]
            }
        }
        guard let query else { throw ConfigurationError(flag: "QUERY", reason: "missing: what to search for") }
        if !items.contains(where: { $0.name == "wait" }) {
            items.append(.init(name: "wait", value: String(SearchQuery.maxWaitMilliseconds)))
        }
        items.insert(.init(name: "q", value: query), at: 0)
        let target = "/search?" + items.map { "\(encode($0.name))=\(encode($0.value))" }.joined(separator: "&")
        return (target, server)
    }

    /// Answers `target` with `service` and writes the outcome: the body on standard output
    /// (pretty-printed when `pretty`), or the problem on standard error. Returns the exit status.
    public static func run(target: String, service: MetService, pretty: Bool) async -> Int32 {
        let response = await service.respond(to: .get(target))
        guard response.status == 200 else {
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

    private static func encode(_ text: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~,|")
        return text.addingPercentEncoding(withAllowedCharacters: allowed) ?? text
    }
}
