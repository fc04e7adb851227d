import MetEngine

/// What a route's function is given about its request, once the table has matched it: the parsed
/// target, the path's `{segment}`, and who is asking.
struct RouteRequest: Sendable {
    let request: Request
    /// The target, parsed; a cache-buster (`_=…`) is removed (`RouteTable`).
    let target: RequestTarget
    /// The path's variable segment, unparsed (`RouteEntry.Paths.segment`); empty for exact paths.
    let segment: String
    /// Whether the route speaks the Met's dialect (`RouteEntry.metDialect`).
    let metDialect: Bool
    /// Whose request it is, for the pacer's fair shares.
    let claim: UpstreamClaim
    /// The client behind a trusted proxy, as its forwarding field says; nil when the peer is the
    /// client.
    let forwarded: RequestClient?

    /// A HEAD: never replaces the latest results.
    var isHead: Bool { request.method == "HEAD" }

    /// How an entry is presented to this request (its conditional and encoding headers).
    ///
    /// - Parameters:
    ///   - fields: top-level members to keep (`fields=`), or nil for the whole body.
    ///   - object: the ID segment, as sent, of a route whose 404 entry is an `object_not_found`.
    func presentation(fields: Set<String>? = nil, object: String? = nil) -> Presentation {
        Presentation(for: request, metDialect: metDialect, fields: fields, object: object)
    }
}
