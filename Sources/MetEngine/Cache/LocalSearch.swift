/// A search of the records a persistent tier holds (`PersistentTier.search`), over its index of
/// `SearchDocument`s: words, the Met's filters, an order, a page and facets.
///
/// Words match whole words of the text and words they begin ("cypress" finds "Cypresses"), case
/// and diacritics aside; every word must match (in any of `columns`). The Met matches substrings
/// of a whole `q`: the two agree on whole words.
public struct LocalSearch: Sendable, Hashable {
    /// The order of the results; every order ends with the object ID, so pages are stable.
    public enum Order: String, Sendable, CaseIterable {
        /// Best match first (BM25 over the fields: a title match weighs most), then by ID. By ID
        /// without words.
        case relevance
        case id
        case idDescending
        /// By title, case aside; untitled last.
        case title
        case titleDescending
        /// By begin date, then end date; undated last.
        case date
        case dateDescending
    }

    /// The words to find; none finds every record (a filter-only search). At most `maxWords`.
    public var words: [String] = []
    /// The most words a search may have: each is a phrase the index looks up.
    public static let maxWords = 16
    /// The columns words are looked for in (`SearchDocument.columns`); nil for all.
    public var columns: [String]?
    public var isHighlight: Bool?
    public var isOnView: Bool?
    public var hasImage: Bool?
    public var isPublicDomain: Bool?
    /// Department names, any of which matches (a department ID may be spelled several ways).
    public var departments: [String]?
    /// Classifications, any of which matches (exact).
    public var classifications: [String]?
    /// Terms of which one must occur as words in the `medium` column.
    public var mediumTerms: [String]?
    /// Terms of which one must occur as words in the `place` column.
    public var placeTerms: [String]?
    /// Records whose dates lie within these years (begin ≥ `dateBegin`, end ≤ `dateEnd`).
    public var dateBegin: Int?
    public var dateEnd: Int?
    public var order = Order.relevance
    public var offset = 0
    public var limit = 20
    /// The facets to count over all matches.
    public var facets: [SearchFacet] = []
    /// The version of the index whose result to page through (`LocalSearchPage.version`), while
    /// the tier still keeps it; nil (or a result no longer kept): the index as it is now.
    public var version: Int64?

    public init() {}
}

/// A fact local search counts matches by.
public enum SearchFacet: String, Sendable, CaseIterable {
    case department
    case classification
    /// `SearchDocument.century`.
    case century
    case isPublicDomain
    case hasImage
}

/// One value of a facet and how many matches have it; `value` nil for matches without one.
public struct FacetCount: Sendable, Equatable {
    public enum Value: Sendable, Equatable, Hashable {
        case text(String)
        case integer(Int)
        case bool(Bool)
        case none
    }

    public var value: Value
    public var count: Int

    public init(value: Value, count: Int) {
        self.value = value
        self.count = count
    }
}

/// A facet's counts: its most frequent values (at most `maxValues`, most frequent first, then by
/// value), and how many matches have one of the values left out. They add up to the total.
public struct FacetCounts: Sendable, Equatable {
    public var values: [FacetCount]
    public var others: Int

    /// The most values listed per facet.
    public static let maxValues = 100

    public init(values: [FacetCount], others: Int) {
        self.values = values
        self.others = others
    }
}

/// A page of local search results.
public struct LocalSearchPage: Sendable, Equatable {
    /// All matches.
    public var total: Int
    /// The page's object IDs, in order.
    public var ids: [Int]
    /// The counts of each facet asked for.
    public var facets: [SearchFacet: FacetCounts]
    /// The records the index holds.
    public var indexed: Int
    /// The version of the index the result is of: ask later pages at it (`LocalSearch.version`)
    /// to page through the same result while the index changes.
    public var version: Int64

    public init(total: Int, ids: [Int], facets: [SearchFacet: FacetCounts], indexed: Int, version: Int64) {
        self.total = total
        self.ids = ids
        self.facets = facets
        self.indexed = indexed
        self.version = version
    }
}
