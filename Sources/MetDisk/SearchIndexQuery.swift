import MetEngine

/// A `LocalSearch` as SQL over the search index's tables (`SearchIndex`), run on a reader's
/// connection in one read transaction: the total, the page, each facet and the records indexed
/// are read from the same state of the index.
struct SearchIndexQuery {
    /// The FTS5 query, or nil when nothing is asked of the text.
    let match: String?
    /// Whether a text filter has no word to look for (`medium=!!!`): nothing matches.
    let matchesNothing: Bool
    /// The tables, joined, and the conditions, with their parameters.
    private let from: String
    private let conditions: String
    private let parameters: [SQLiteValue]
    private let search: LocalSearch

    /// Each column's weight in bm25's score, in `SearchDocument.columns`' order: a title match
    /// counts most, then tags and artist, then medium and place, then the rest.
    static let weights = "10.0, 4.0, 4.0, 2.0, 2.0, 1.0"

    init(_ search: LocalSearch) {
        self.search = search
        var matchesNothing = false
        var parts: [String] = []
        let words = search.words.compactMap(Self.phrase)
        if !words.isEmpty {
            let all = words.joined(separator: " ")
            if let columns = search.columns {
                parts.append("{\(columns.joined(separator: " "))} : (\(all))")
            } else {
                parts.append(all)
            }
        }
        for (terms, column) in [(search.mediumTerms, "medium"), (search.placeTerms, "place")] {
            guard let terms else { continue }
            let phrases = terms.compactMap(Self.phrase)
            if phrases.isEmpty { matchesNothing = true }
            parts.append("{\(column)} : (\(phrases.joined(separator: " OR ")))")
        }
        self.matchesNothing = matchesNothing
        match = parts.isEmpty || matchesNothing ? nil : parts.joined(separator: " AND ")

        var parameters: [SQLiteValue] = []
        func parameter(_ value: SQLiteValue) -> String {
            parameters.append(value)
            return "?\(parameters.count)"
        }
        var from = "search_facts f"
        if let match {
            from +=
                " JOIN (SELECT rowid AS id, bm25(search_text, \(Self.weights)) AS score FROM search_text"
                + " WHERE search_text MATCH \(parameter(.text(match)))) m ON m.id = f.object_id"
        }
        var conditions: [String] = []
        for (flag, column) in [
            (search.isHighlight, "is_highlight"), (search.isOnView, "is_on_view"), (search.hasImage, "has_image"),
            (search.isPublicDomain, "is_public_domain"),
        ] {
            guard let flag else { continue }
            conditions.append("f.\(column) = \(flag ? 1 : 0)")
        }
        for (names, column) in [(search.departments, "department"), (search.classifications, "classification")] {
            guard let names else { continue }
            let list = names.map { parameter(.text($0)) }.joined(separator: ", ")
            conditions.append(list.isEmpty ? "0" : "f.\(column) IN (\(list))")
        }
        if let begin = search.dateBegin { conditions.append("f.begin_date >= \(parameter(.integer(Int64(begin))))") }
        if let end = search.dateEnd { conditions.append("f.end_date <= \(parameter(.integer(Int64(end))))") }
        if matchesNothing { conditions.append("0") }
        self.from = from
        self.conditions = conditions.isEmpty ? "" : " WHERE " + conditions.joined(separator: " AND ")
        self.parameters = parameters
    }

    /// `word` as an FTS5 phrase that also matches words it begins (`"cypress"*`), its quotes
    /// doubled; nil when it has no letter or digit (the tokenizer would find no word in it).
    static func phrase(_ word: String) -> String? {
        guard word.unicodeScalars.contains(where: { $0.properties.isAlphabetic || $0.properties.numericType != nil })
        else { return nil }
        return "\"" + word.split(separator: "\"", omittingEmptySubsequences: false).joined(separator: "\"\"") + "\"*"
    }

    /// The order, ending with the object ID so that every order is total (stable pages).
    var order: String {
        switch search.order {
        case .relevance: match == nil ? "f.object_id" : "m.score, f.object_id"
        case .id: "f.object_id"
        case .idDescending: "f.object_id DESC"
        case .title: "f.sort_title IS NULL, f.sort_title, f.object_id"
        case .titleDescending: "f.sort_title IS NULL, f.sort_title DESC, f.object_id DESC"
        case .date: "f.begin_date IS NULL, f.begin_date, f.end_date, f.object_id"
        case .dateDescending: "f.begin_date IS NULL, f.begin_date DESC, f.end_date DESC, f.object_id DESC"
        }
    }

    private static func column(of facet: SearchFacet) -> String {
        switch facet {
        case .department: "department"
        case .classification: "classification"
        case .century: "century"
        case .isPublicDomain: "is_public_domain"
        case .hasImage: "has_image"
        }
    }

    /// Runs the query on `connection` (a reader's).
    func run(on connection: SQLiteConnection) throws(SQLiteError) -> LocalSearchPage {
        try connection.execute("BEGIN")
        defer { try? connection.execute("COMMIT") }
        let indexed = Int(try connection.integer("SELECT count(*) FROM search_facts"))
        let count = try connection.prepare("SELECT count(*) FROM \(from)\(conditions)")
        try count.bind(parameters)
        let total = try count.step() ? Int(count.integer(at: 0)) : 0
        count.reset()

        var ids: [Int] = []
        if total > search.offset {
            let page = try connection.prepare(
                "SELECT f.object_id FROM \(from)\(conditions) ORDER BY \(order) LIMIT \(search.limit) OFFSET \(search.offset)"
            )
            try page.bind(parameters)
            while try page.step() { ids.append(Int(page.integer(at: 0))) }
        }

        var facets: [SearchFacet: FacetCounts] = [:]
        for facet in search.facets {
            let column = Self.column(of: facet)
            let statement = try connection.prepare(
                "SELECT f.\(column), count(*) AS n FROM \(from)\(conditions) GROUP BY f.\(column) "
                    + "ORDER BY n DESC, f.\(column) LIMIT \(FacetCounts.maxValues)")
            try statement.bind(parameters)
            var values: [FacetCount] = []
            while try statement.step() {
                let value: FacetCount.Value
                switch facet {
                case _ where statement.optionalText(at: 0) == nil:
                    value = .none
                case .department, .classification: value = .text(statement.text(at: 0))
                case .century: value = .integer(Int(statement.integer(at: 0)))
                case .isPublicDomain, .hasImage: value = .bool(statement.integer(at: 0) != 0)
                }
                values.append(FacetCount(value: value, count: Int(statement.integer(at: 1))))
            }
            facets[facet] = FacetCounts(values: values, others: total - values.reduce(0) { $0 + $1.count })
        }
        return LocalSearchPage(total: total, ids: ids, facets: facets, indexed: indexed)
    }
}
