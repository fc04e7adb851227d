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
}
