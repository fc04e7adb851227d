extension RequestTarget {
    /// Throws `unknown_parameter` for the first query parameter whose name is not in `allowed`,
    /// naming it (cut to 60 characters, as the client may have sent anything).
    ///
    /// - Parameter known: what the route takes, in words, for the problem's detail. By default
    ///   the sorted names in `allowed`, or that the route takes no parameters.
    func allowOnly(_ allowed: Set<String>, known: String? = nil) throws(Problem) {
        guard let unknown = query.first(where: { !allowed.contains($0.name) }) else { return }
        let name = String(unknown.name.prefix(60))
        let known =
            known
            ?? (allowed.isEmpty
                ? "This route takes no parameters." : "Known: \(allowed.sorted().joined(separator: ", ")).")
        throw Problem(.unknownParameter, "Unknown parameter '\(name)'. \(known)", parameter: name)
    }

    /// Throws `invalid_parameter` for the first of `names` given more than once.
    func rejectRepeats(of names: Set<String>) throws(Problem) {
        for name in names.sorted() where query.lazy.filter({ $0.name == name }).count > 1 {
            throw Problem(.invalidParameter, "\(name) is given more than once.", parameter: name)
        }
    }

    /// Whether a route that answers with a redirect should answer with JSON instead: `format`
    /// absent (the redirect) or `json`. Parameters other than `allowed`, and repeated ones, are
    /// refused first.
    func redirectFormat(allowing allowed: Set<String>) throws(Problem) -> Bool {
        try allowOnly(allowed)
        try rejectRepeats(of: allowed)
        guard let format = value(of: "format") else { return false }
        guard format == "json" else {
            throw Problem(.invalidParameter, "format must be json (or absent, for a redirect).", parameter: "format")
        }
        return true
    }
}
