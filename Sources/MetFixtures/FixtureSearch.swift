import MetCore
import MetEngine

/// One `/search` query of the fake Met, parsed once and then tested against many records.
///
/// Matching works in two steps so that synthetic records can be searched without building them:
/// `hits(in:)` says what one text field contributes (does `q` occur in it, does a `medium` or
/// `geoLocation` term), hits of a record's fields are unioned, and `placement(of:hits:)` applies
/// the scope and the attribute filters to the union. Immutable, so `Sendable`.
struct FixtureSearch: Sendable {
    /// Where a matching record goes in the answer: records whose title contains `q` come first.
    enum Placement: Sendable {
        /// `q` occurs in the title.
        case titleMatch
        /// The record matches, but not through its title (or there is no `q`).
        case otherMatch
    }

    /// What some text fields of one record contribute to a match.
    struct Hits: Sendable {
        /// The roles of the fields in which `q` occurs.
        var queryRoles: FixtureRecord.Roles = []
        /// Whether a `medium` term occurs in a medium field.
        var medium = false
        /// Whether a `geoLocation` term occurs in a place field.
        var geo = false

        mutating func formUnion(_ other: Hits) {
            queryRoles.formUnion(other.queryRoles)
            medium = medium || other.medium
            geo = geo || other.geo
        }
    }

    /// `q` lower-cased as UTF-8; nil when absent or empty (everything matches).
    let query: [UInt8]?
    /// The roles `q` may match in: `.text` by default, else the union of `title`, `tags` and
    /// `artistOrCulture` flags that are `true`.
    let scope: FixtureRecord.Roles
    /// `isHighlight`, when exactly `true` or `false`.
    let isHighlight: Bool?
    /// `isOnView`, when exactly `true` or `false`.
    let isOnView: Bool?
    /// `hasImages`, when exactly `true` or `false`. Every record counts as having some image (as
    /// at the Met, where records without an Open Access image still match `true`), so `true`
    /// keeps all and `false` keeps none.
    let hasImages: Bool?
    /// `departmentId`, when it names a known department; other values are ignored, as at the Met.
    let departmentID: Int?
    /// `medium` split on `|`, case-sensitive; nil when absent.
    let mediumTerms: [[UInt8]]?
    /// `geoLocation` split on `|`, case-sensitive; nil when absent.
    let geoTerms: [[UInt8]]?
    /// `dateBegin` (years) when both `dateBegin` and `dateEnd` are integers.
    let dateBegin: Int?
    /// `dateEnd` (years) when both `dateBegin` and `dateEnd` are integers.
    let dateEnd: Int?
    /// True when both dates are given but one is not an integer: the Met then finds nothing.
    let matchesNothing: Bool

    /// Parses the search parameters; unknown ones are ignored, and the last of a repeated one wins.
    ///
    /// - Parameters:
    ///   - items: the decoded query items.
    ///   - knownDepartments: department IDs that `departmentId` may name.
    init(_ items: [RequestTarget.QueryItem], knownDepartments: Set<Int>) {
        func value(_ name: String) -> String? { Self.lastValue(of: name, in: items) }
        func flag(_ name: String) -> Bool? {
            switch value(name) {
            case "true": true
            case "false": false
            default: nil
            }
        }
        func terms(_ name: String) -> [[UInt8]]? {
            let terms = (value(name) ?? "").split(separator: "|").map { Array($0.utf8) }
            return terms.isEmpty ? nil : terms
        }

        let q = value("q") ?? ""
        query = q.isEmpty ? nil : Array(q.lowercased().utf8)
        var scope: FixtureRecord.Roles = []
        if flag("title") == true { scope.insert(.title) }
        if flag("tags") == true { scope.insert(.tags) }
        if flag("artistOrCulture") == true { scope.insert(.artistOrCulture) }
        self.scope = scope.isEmpty ? .text : scope
        isHighlight = flag("isHighlight")
        isOnView = flag("isOnView")
        hasImages = flag("hasImages")
        departmentID = value("departmentId").flatMap { Int($0) }.flatMap { knownDepartments.contains($0) ? $0 : nil }
        mediumTerms = terms("medium")
        geoTerms = terms("geoLocation")
        if let begin = value("dateBegin"), let end = value("dateEnd") {
            dateBegin = Int(begin)
            dateEnd = Int(end)
            matchesNothing = dateBegin == nil || dateEnd == nil
        } else {
            dateBegin = nil
            dateEnd = nil
            matchesNothing = false
        }
    }

    /// Whether a filter other than `hasImages` (which so many clients send that it cannot stand
    /// for a search of its own) narrows the search: what lets v1 answer an empty `q`.
    var narrows: Bool {
        isHighlight != nil || isOnView != nil || departmentID != nil || mediumTerms != nil || geoTerms != nil
            || dateBegin != nil
    }

    /// What `field` contributes to its record's match.
    func hits(in field: FixtureRecord.Field) -> Hits {
        var hits = Hits()
        if let query, Self.contains(field.folded, query) { hits.queryRoles = field.roles }
        if let mediumTerms, field.roles.contains(.medium) {
            hits.medium = mediumTerms.contains { Self.contains(field.exact, $0) }
        }
        if let geoTerms, field.roles.contains(.geo) {
            hits.geo = geoTerms.contains { Self.contains(field.exact, $0) }
        }
        return hits
    }

    /// What a list of fields contributes: the union of `hits(in:)`.
    func hits(in fields: [FixtureRecord.Field]) -> Hits {
        var hits = Hits()
        for field in fields { hits.formUnion(self.hits(in: field)) }
        return hits
    }

    /// Whether `q` occurs in `folded` (lower-cased UTF-8); true when there is no `q`.
    func queryOccurs(in folded: [UInt8]) -> Bool {
        guard let query else { return true }
        return Self.contains(folded, query)
    }

    /// Decides whether a record matches, given its attributes and the union of its fields' hits.
    ///
    /// - Returns: where the record goes, or nil when it does not match.
    func placement(of attributes: FixtureRecord.Attributes, hits: Hits) -> Placement? {
        if matchesNothing || hasImages == false { return nil }
        if query != nil && hits.queryRoles.isDisjoint(with: scope) { return nil }
        if let isHighlight, attributes.isHighlight != isHighlight { return nil }
        if let isOnView, attributes.isOnView != isOnView { return nil }
        if let departmentID, attributes.departmentID != departmentID { return nil }
        if mediumTerms != nil && !hits.medium { return nil }
        if geoTerms != nil && !hits.geo { return nil }
        if let dateBegin, let dateEnd {
            guard let begin = attributes.beginDate, let end = attributes.endDate, begin >= dateBegin, end <= dateEnd
            else { return nil }
        }
        return query != nil && hits.queryRoles.contains(.title) ? .titleMatch : .otherMatch
    }

    /// The value of the last query item called `name`, or nil.
    static func lastValue(of name: String, in items: [RequestTarget.QueryItem]) -> String? {
        items.last { $0.name == name }?.value
    }

    /// Whether `needle` occurs in `haystack` as a contiguous byte run (true for an empty needle).
    static func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
        let needleCount = needle.count
        guard needleCount > 0 else { return true }
        guard needleCount <= haystack.count else { return false }
        return haystack.withUnsafeBufferPointer { hay in
            needle.withUnsafeBufferPointer { wanted in
                let first = wanted[0]
                var start = 0
                while start <= hay.count - needleCount {
                    if hay[start] == first {
                        var matched = 1
                        while matched < needleCount && hay[start + matched] == wanted[matched] { matched += 1 }
                        if matched == needleCount { return true }
                    }
                    start += 1
                }
                return false
            }
        }
    }
}
