import Foundation
import MetEngine

/// A `LocalSearch` run on a reader's connection in one read transaction: SQLite (FTS5) gives the
/// words' matches, `SearchFacts` their facts, and the filters, facets and orders are worked out
/// over them (a title order pages in SQL: titles are not kept in memory). The total, the page,
/// each facet and the records indexed are of the same state of the index.
///
/// Relevance is BM25 over the fields (BM25F's shape), from which columns hold each word: a word's
/// frequency in a record is the sum of the weights of the columns that hold it (a column counts
/// once, however often the word is in it), and its score `idf × f × (k1 + 1) / (f + k1)` with
/// k1 = 1.2, summed over the words; no length normalization (BM25's b = 0). FTS5's own `bm25()`
/// reads every match's positions and size, about a microsecond each: 7 ms for a word in 8,000 of
/// 100,000 records, where this reads one list of row IDs per column that holds the word.
struct SearchIndexQuery {
    /// The FTS5 query, or nil when nothing is asked of the text.
    let match: String?
    /// Whether the words or a text filter have no word to look for (`q=???`, `medium=!!!`):
    /// nothing matches.
    let matchesNothing: Bool
    private let search: LocalSearch

    /// Each column's weight in relevance, in `SearchDocument.columns`' order: a title match counts
    /// most, then tags and artist, then medium and place, then the rest.
    static let weights: [Double] = [10, 4, 4, 2, 2, 1]
    /// BM25's saturation of a word's frequency.
    static let k1 = 1.2
    /// The least characters of a word that also matches the words it begins: a shorter one
    /// matches whole words only (`"a"*` would read the doclist of every word beginning with a).
    static let prefixLength = 3

    init(_ search: LocalSearch) {
        self.search = search
        var matchesNothing = false
        var parts: [String] = []
        let words = search.words.compactMap(Self.phrase)
        if !search.words.isEmpty && words.isEmpty { matchesNothing = true }
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
    }

    /// `word` as an FTS5 phrase, its quotes doubled and its control characters made spaces (a NUL
    /// ends an FTS5 string); with `*` when it has `prefixLength` characters or more, so that it
    /// also matches the words it begins (`"cypress"*`). Nil when it has no letter or digit (the
    /// tokenizer would find no word in it).
    static func phrase(_ word: String) -> String? {
        guard word.unicodeScalars.contains(where: { $0.properties.isAlphabetic || $0.properties.numericType != nil })
        else { return nil }
        var text = ""
        for scalar in word.unicodeScalars {
            if scalar == "\"" {
                text += "\"\""
            } else if scalar.properties.generalCategory == .control {
                text += " "
            } else {
                text.unicodeScalars.append(scalar)
            }
        }
        return "\"" + text + (word.count >= prefixLength ? "\"*" : "\"")
    }

    /// Runs the query on `connection` (a reader's), with the facts of `facts` (loaded again in
    /// this transaction when they are not of the file's version), or reads its result from
    /// `results` when the same search was worked out at this version.
    func run(on connection: SQLiteConnection, facts: SearchFacts, results: SearchResultCache) throws(SQLiteError)
        -> LocalSearchPage
    {
        try connection.execute("BEGIN")
        defer { try? connection.execute("COMMIT") }
        let version = try connection.integer("SELECT version FROM search_version WHERE id = 1")
        let titled = search.order == .title || search.order == .titleDescending
        for asked in [search.version, version].compactMap({ $0 }) where !titled {
            guard let kept = results.result(of: search, at: asked) else { continue }
            return LocalSearchPage(
                total: kept.ids.count, ids: Self.slice(kept.ids, offset: search.offset, limit: search.limit),
                facets: kept.facets, indexed: kept.indexed, version: asked)
        }
        let table = try facts.table(at: version) { () throws(SQLiteError) in try Self.rows(on: connection) }
        let filter = FactFilter(search, table: table)
        var matches: [Match] = []
        if let match {
            let statement = try connection.prepare("SELECT rowid FROM search_text WHERE search_text MATCH ?1")
            try statement.bind(.text(match))
            while try statement.step() {
                let id = Int(statement.integer(at: 0))
                guard let fact = table[id], filter.keeps(fact) else { continue }
                matches.append(Match(id: id, score: 0, fact: fact))
            }
            if search.order == .relevance { try score(&matches, with: statement, on: connection, records: table.count) }
        } else if !matchesNothing {
            table.visit { id, fact in
                if filter.keeps(fact) { matches.append(Match(id: id, score: 0, fact: fact)) }
            }
        }
        var counted: [SearchFacet: FacetCounts] = [:]
        for facet in search.facets { counted[facet] = Self.counts(of: facet, in: matches, table: table) }
        guard !titled else {
            return LocalSearchPage(
                total: matches.count, ids: try titlePage(on: connection, total: matches.count), facets: counted,
                indexed: table.count, version: version)
        }
        Self.sort(&matches, order: search.order, words: match != nil)
        let ordered = matches.map(\.id)
        results.keep(.init(ids: ordered, facets: counted, indexed: table.count), of: search, at: version)
        return LocalSearchPage(
            total: ordered.count, ids: Self.slice(ordered, offset: search.offset, limit: search.limit),
            facets: counted, indexed: table.count, version: version)
    }

    /// Gives each of `matches` its relevance (see the type's comment), as a negative score (lower
    /// is better), with `statement`, which selects the row IDs of a MATCH: one query for each word
    /// and column searched, and one count for each word when there are several (its idf; one
    /// word's is the same for every match). `records`: the records indexed.
    private func score(
        _ matches: inout [Match], with statement: SQLiteStatement, on connection: SQLiteConnection, records: Int
    ) throws(SQLiteError) {
        let phrases = Array(Set(search.words.compactMap(Self.phrase))).sorted()
        guard !phrases.isEmpty, !matches.isEmpty else { return }
        // FTS5 gives row IDs in ascending order; sorted here all the same, so that a search finds them.
        if !zip(matches, matches.dropFirst()).allSatisfy({ $0.id < $1.id }) { matches.sort { $0.id < $1.id } }
        let columns = search.columns ?? SearchDocument.columns
        var frequency = [Double](repeating: 0, count: matches.count)
        for phrase in phrases {
            for index in frequency.indices { frequency[index] = 0 }
            for column in columns {
                guard let weight = SearchDocument.columns.firstIndex(of: column).map({ Self.weights[$0] }) else {
                    continue
                }
                try statement.bind(.text("{\(column)} : \(phrase)"))
                while try statement.step() {
                    if let index = Self.index(of: Int(statement.integer(at: 0)), in: matches) {
                        frequency[index] += weight
                    }
                }
            }
            var idf = 1.0
            if phrases.count > 1 {
                let count = try connection.prepare("SELECT count(*) FROM search_text WHERE search_text MATCH ?1")
                try count.bind(.text("{\(columns.joined(separator: " "))} : \(phrase)"))
                let holding = try count.step() ? Double(count.integer(at: 0)) : 0
                // As FTS5's bm25: a word in more than half the records still counts a little.
                idf = max(log((Double(records) - holding + 0.5) / (holding + 0.5)), 1e-6)
            }
            for index in frequency.indices where frequency[index] > 0 {
                let f = frequency[index]
                matches[index].score -= idf * f * (Self.k1 + 1) / (f + Self.k1)
            }
        }
    }

    /// The index of the match of `id` in `matches` (ordered by ID), if there is one.
    private static func index(of id: Int, in matches: [Match]) -> Int? {
        var (low, high) = (0, matches.count)
        while low < high {
            let middle = (low + high) / 2
            if matches[middle].id < id { low = middle + 1 } else { high = middle }
        }
        return low < matches.count && matches[low].id == id ? low : nil
    }

    private static func slice(_ ids: [Int], offset: Int, limit: Int) -> [Int] {
        guard offset < ids.count else { return [] }
        return Array(ids[offset..<min(ids.count, offset + limit)])
    }

    /// A match: its object, its relevance as a score (lower is better; 0 without words, or for
    /// another order) and its facts.
    struct Match {
        var id: Int
        var score: Double
        var fact: SearchFacts.Fact
    }

    /// The filters as tests of a record's facts.
    private struct FactFilter {
        var required: UInt8 = 0
        var refused: UInt8 = 0
        var departments: Set<Int32>?
        var classifications: Set<Int32>?
        var dateBegin: Int32?
        var dateEnd: Int32?

        init(_ search: LocalSearch, table: SearchFacts.Table) {
            for (flag, bit) in [
                (search.isHighlight, SearchFacts.Fact.highlight), (search.isOnView, SearchFacts.Fact.onView),
                (search.hasImage, SearchFacts.Fact.image), (search.isPublicDomain, SearchFacts.Fact.publicDomain),
            ] {
                guard let flag else { continue }
                if flag { required |= bit } else { refused |= bit }
            }
            departments = search.departments.map { Set($0.compactMap { table.codes[$0] }) }
            classifications = search.classifications.map { Set($0.compactMap { table.codes[$0] }) }
            dateBegin = search.dateBegin.map { Int32(clamping: $0) }
            dateEnd = search.dateEnd.map { Int32(clamping: $0) }
        }

        func keeps(_ fact: SearchFacts.Fact) -> Bool {
            guard fact.flags & required == required, fact.flags & refused == 0 else { return false }
            if let departments, !departments.contains(fact.department) { return false }
            if let classifications, !classifications.contains(fact.classification) { return false }
            if let dateBegin, fact.begin == .min || fact.begin < dateBegin { return false }
            if let dateEnd, fact.end == .min || fact.end > dateEnd { return false }
            return true
        }
    }

    /// `matches` ordered by `order` (ties by ID); title orders are SQL's.
    private static func sort(_ matches: inout [Match], order: LocalSearch.Order, words: Bool) {
        func dates(_ fact: SearchFacts.Fact) -> (Bool, Int32, Int32) { (fact.begin == .min, fact.begin, fact.end) }
        switch order {
        case .relevance where words: matches.sort { ($0.score, $0.id) < ($1.score, $1.id) }
        case .relevance, .id, .title, .titleDescending: matches.sort { $0.id < $1.id }
        case .idDescending: matches.sort { $0.id > $1.id }
        case .date:
            matches.sort {
                let (a, b) = (dates($0.fact), dates($1.fact))
                return (a.0 ? 1 : 0, a.1, a.2, $0.id) < (b.0 ? 1 : 0, b.1, b.2, $1.id)
            }
        case .dateDescending:
            matches.sort {
                let (a, b) = (dates($0.fact), dates($1.fact))
                if a.0 != b.0 { return b.0 }
                return (a.1, a.2, $0.id) > (b.1, b.2, $1.id)
            }
        }
    }

    /// The counts of `facet` over `matches`: most frequent first, then by value (none first; text
    /// by its UTF-8 bytes).
    private static func counts(of facet: SearchFacet, in matches: [Match], table: SearchFacts.Table) -> FacetCounts {
        var counts: [Int32: Int] = [:]
        for match in matches {
            let key: Int32
            switch facet {
            case .department: key = match.fact.department
            case .classification: key = match.fact.classification
            case .century: key = match.fact.century == .min ? Int32.min : Int32(match.fact.century)
            case .isPublicDomain: key = match.fact.flags & SearchFacts.Fact.publicDomain != 0 ? 1 : 0
            case .hasImage: key = match.fact.flags & SearchFacts.Fact.image != 0 ? 1 : 0
            }
            counts[key, default: 0] += 1
        }
        func value(_ key: Int32) -> FacetCount.Value {
            switch facet {
            case .department, .classification: key < 0 ? .none : .text(table.names[Int(key)])
            case .century: key == Int32.min ? .none : .integer(Int(key))
            case .isPublicDomain, .hasImage: .bool(key != 0)
            }
        }
        func before(_ a: FacetCount.Value, _ b: FacetCount.Value) -> Bool {
            switch (a, b) {
            case (.none, .none): false
            case (.none, _): true
            case (_, .none): false
            case (.text(let x), .text(let y)): Array(x.utf8).lexicographicallyPrecedes(Array(y.utf8))
            case (.integer(let x), .integer(let y)): x < y
            case (.bool(let x), .bool(let y)): !x && y
            default: false
            }
        }
        let values = counts.map { FacetCount(value: value($0.key), count: $0.value) }.sorted {
            $0.count != $1.count ? $0.count > $1.count : before($0.value, $1.value)
        }
        let listed = Array(values.prefix(FacetCounts.maxValues))
        return FacetCounts(values: listed, others: matches.count - listed.reduce(0) { $0 + $1.count })
    }

    /// The page of a title order, from SQL (titles are not kept in memory): `FactFilter`'s
    /// filters as conditions.
    private func titlePage(on connection: SQLiteConnection, total: Int) throws(SQLiteError) -> [Int] {
        guard total > search.offset else { return [] }
        var parameters: [SQLiteValue] = []
        func parameter(_ value: SQLiteValue) -> String {
            parameters.append(value)
            return "?\(parameters.count)"
        }
        var from = "search_facts f"
        if let match {
            from +=
                " JOIN (SELECT rowid AS id FROM search_text WHERE search_text MATCH \(parameter(.text(match)))) m"
                + " ON m.id = f.object_id"
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
        // Clamped as the facts in memory are.
        if let begin = search.dateBegin {
            conditions.append("f.begin_date >= \(parameter(.integer(Int64(Int32(clamping: begin)))))")
        }
        if let end = search.dateEnd {
            conditions.append("f.end_date <= \(parameter(.integer(Int64(Int32(clamping: end)))))")
        }
        let filtered = conditions.isEmpty ? "" : " WHERE " + conditions.joined(separator: " AND ")
        let order =
            search.order == .title
            ? "f.sort_title IS NULL, f.sort_title, f.object_id"
            : "f.sort_title IS NULL, f.sort_title DESC, f.object_id DESC"
        let page = try connection.prepare(
            "SELECT f.object_id FROM \(from)\(filtered) ORDER BY \(order) LIMIT \(search.limit) OFFSET \(search.offset)"
        )
        try page.bind(parameters)
        var ids: [Int] = []
        while try page.step() { ids.append(Int(page.integer(at: 0))) }
        return ids
    }

    /// Every row of `search_facts`.
    private static func rows(on connection: SQLiteConnection) throws(SQLiteError) -> [(Int, SearchFacts.Row)] {
        let statement = try connection.prepare(
            """
            SELECT object_id, department, classification, century, is_highlight, is_on_view, has_image,
                is_public_domain, begin_date, end_date FROM search_facts
            """)
        var rows: [(Int, SearchFacts.Row)] = []
        func integer(_ column: Int32) -> Int? {
            statement.isNull(at: column) ? nil : Int(statement.integer(at: column))
        }
        while try statement.step() {
            rows.append(
                (
                    Int(statement.integer(at: 0)),
                    SearchFacts.Row(
                        department: statement.optionalText(at: 1), classification: statement.optionalText(at: 2),
                        century: integer(3), isHighlight: statement.integer(at: 4) != 0,
                        isOnView: statement.integer(at: 5) != 0, hasImage: statement.integer(at: 6) != 0,
                        isPublicDomain: statement.integer(at: 7) != 0, begin: integer(8), end: integer(9))
                ))
        }
        return rows
    }
}
