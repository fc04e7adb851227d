import MetEngine

/// A validated `/random` request: which objects to draw from and what the answer looks like.
struct RandomRequest: Sendable {
    /// With `q`: the search whose ID list is drawn from (its `hasImages` and `departmentId` are
    /// the Met's search filters, as on `/search`). Without: nil, and the department's list, or the
    /// whole collection's, is drawn from.
    var search: SearchQuery?
    /// Without `q`: the department whose list is drawn from, or nil for the whole collection.
    var departmentId: Int?
    /// Only objects whose record carries an image URL (`hasImages`, default true).
    var requiresImage: Bool
    /// Only public-domain objects (`isPublicDomain`, default false: any).
    var requiresPublicDomain: Bool
    /// 200 with JSON (`format=json`) instead of a 302.
    var asJSON: Bool

    /// Every parameter the route takes.
    static let parameters: Set<String> = ["q", "hasImages", "isPublicDomain", "departmentId", "format"]

    init(_ target: RequestTarget) throws(Problem) {
        asJSON = try target.redirectFormat(allowing: Self.parameters)
        requiresPublicDomain = try Self.flag("isPublicDomain", in: target) ?? false
        if target.value(of: "q") != nil {
            var rest = target
            rest.query.removeAll { $0.name == "isPublicDomain" || $0.name == "format" }
            let search = try SearchQuery(rest)
            self.search = search
            requiresImage = search.requiresImages
            return
        }
        requiresImage = try Self.flag("hasImages", in: target) ?? true
        departmentId = try target.value(of: "departmentId").map { (text) throws(Problem) in
            try SearchQuery.departmentID(text)
        }
    }

    /// The ID lists drawn from when there is no search: the department's, or the collection's.
    var objectList: MetResource { .objectList(departmentIds: departmentId.map { [$0] } ?? [], metadataDate: nil) }

    /// Whether `summary` meets the request's conditions on the record itself.
    func accepts(_ summary: ObjectSummary) -> Bool {
        (!requiresImage || summary.hasImage) && (!requiresPublicDomain || summary.isPublicDomain == true)
    }

    /// The filters in words, for a problem's detail (`hasImages=true, departmentId=3`).
    var description: String {
        var parts: [String] = []
        if let search {
            parts.append("q=\(search.q.prefix(60))")
            parts += search.filters.map { "\($0.name)=\($0.value)" }
        } else {
            parts.append("hasImages=\(requiresImage)")
            if let departmentId { parts.append("departmentId=\(departmentId)") }
        }
        if requiresPublicDomain { parts.append("isPublicDomain=true") }
        return parts.joined(separator: ", ")
    }

    /// `true`, `false` or absent; anything else is a 400 naming the parameter.
    private static func flag(_ name: String, in target: RequestTarget) throws(Problem) -> Bool? {
        guard let text = target.value(of: name) else { return nil }
        guard let flag = RequestTarget.boolean(text) else {
            throw Problem(.invalidParameter, "\(name) must be true or false.", parameter: name)
        }
        return flag
    }
}
