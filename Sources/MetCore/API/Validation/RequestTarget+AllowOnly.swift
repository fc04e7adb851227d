import MetEngine

extension RequestTarget {
    /// Throws `unknown_parameter` for the first query parameter whose name is not in `allowed`,
    /// naming it (cut to 60 characters, as the client may have sent anything); then
    /// `invalid_parameter` for the first given more than once (no value silently wins).
    ///
    /// - Parameter known: what the route takes, in words, for the problem's detail. By default
    ///   the sorted names in `allowed`, or that the route takes no parameters.
    func allowOnly(_ allowed: Set<String>, known: String? = nil) throws(Problem) {
        guard let unknown = query.first(where: { !allowed.contains($0.name) }) else {
            try rejectRepeats(of: allowed)
            return
        }
        let name = String(unknown.name.prefix(60))
        let known =
            known
            ?? (allowed.isEmpty
                ? "This route takes no parameters." : "Known: \(allowed.sorted().joined(separator: ", ")).")
        throw Problem(.unknownParameter, "Unknown parameter '\(name)'. \(known)", parameter: name)
    }

    /// Throws `invalid_parameter` for the first parameter among `names` given more than once, in
    /// the order sent. One pass, whatever the query's length.
    func rejectRepeats(of names: Set<String>) throws(Problem) {
        var seen = Set<String>()
        for item in query where names.contains(item.name) && !seen.insert(item.name).inserted {
            throw Problem(.invalidParameter, "\(item.name) is given more than once.", parameter: item.name)
        }
    }

    /// `true` or `false` in any case (`True`, as Python clients send it), as a Bool; nil for
    /// anything else.
    static func boolean(_ text: String) -> Bool? {
        switch text.lowercased() {
        case "true": true
        case "false": false
        default: nil
        }
    }

    /// Whether a route that answers with a redirect should answer with JSON instead: `format`
    /// absent (the redirect) or `json`. Parameters other than `allowed`, and repeated ones, are
    /// refused first.
    func redirectFormat(allowing allowed: Set<String>) throws(Problem) -> Bool {
        try allowOnly(allowed)
        guard let format = value(of: "format") else { return false }
        guard format == "json" else {
            throw Problem(.invalidParameter, "format must be json (or absent, for a redirect).", parameter: "format")
        }
        return true
    }
}
