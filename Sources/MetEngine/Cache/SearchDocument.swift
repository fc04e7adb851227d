/// What local search (`LocalSearch`) knows of one object record: its text in the columns a query
/// can be narrowed to, and the facts its filters, facets and sorts read. Read from the record's
/// bytes when the record is stored, so a search never decodes JSON.
///
/// The columns hold the fields a plain `q` searches at the Met (the fake Met's list, which follows
/// the Met's documentation): `title`; `tags` (the tag terms); `artist` (artist name and culture,
/// what `artistOrCulture` narrows to); `medium` (object name, medium and classification, what the
/// `medium` filter reads); `place` (culture and the place fields, what `geoLocation` reads); `text`
/// (the rest: accession number, artist bio and nationality, period, dynasty, reign, portfolio,
/// department, credit line, object date, county, constituents). Values are joined by a line feed.
/// Every member is optional in the record: a value of another type counts as absent, as the Met's
/// schema changed over the years (docs/MET-API.md §3.2).
public struct SearchDocument: Sendable, Equatable {
    public var objectID: Int
    public var title = ""
    public var tags = ""
    public var artist = ""
    public var medium = ""
    public var place = ""
    public var text = ""
    /// `department` as the record spells it (not always `/departments`' name: see docs/MET-API.md §4).
    public var department: String?
    public var classification: String?
    public var isHighlight = false
    /// Whether `GalleryNumber` is non-empty (what the Met's `isOnView` reads).
    public var isOnView = false
    /// Whether `primaryImage` or `primaryImageSmall` is a non-empty URL.
    public var hasImage = false
    public var isPublicDomain = false
    /// `objectBeginDate` and `objectEndDate`, years (negative: BCE).
    public var beginDate: Int?
    public var endDate: Int?

    /// The century `beginDate` falls in: 19 for 1801-1900, -5 for 500-401 BCE; nil without a date.
    /// The Met writes 0 for some undated works: counted in the first century.
    public var century: Int? {
        guard let year = beginDate else { return nil }
        // On the magnitude: a record's year may be any Int, Int.min included.
        let hundreds = Int((year.magnitude &- 1) / 100 + 1)
        return year > 0 ? hundreds : year == 0 ? 1 : -hundreds
    }

    /// The column names, in the index's order.
    public static let columns = ["title", "tags", "artist", "medium", "place", "text"]

    /// The columns' values, in `columns`' order.
    public var columnValues: [String] { [title, tags, artist, medium, place, text] }

    public init(objectID: Int) {
        self.objectID = objectID
    }

    private enum Member: Int, CaseIterable {
        case objectID, title, tags, artistDisplayName, culture, objectName, medium, classification
        case city, state, country, region, subregion, locale
        case accessionNumber, artistDisplayBio, artistNationality, constituents, period, dynasty, reign
        case portfolio, department, creditLine, objectDate, county
        case isHighlight, galleryNumber, primaryImage, primaryImageSmall, isPublicDomain
        case objectBeginDate, objectEndDate

        var name: String { self == .galleryNumber ? "GalleryNumber" : "\(self)" }
    }

    private static let names = Member.allCases.map { Array($0.name.utf8) }

    /// The document of the record `json` holds: nil when it is not a valid JSON object with an
    /// integer `objectID`.
    public init?(json: [UInt8]) {
        guard let reader = JSONReader(json, names: Self.names), case .number(let id) = reader.value(0),
            let objectID = reader.integer(id)
        else { return nil }
        self.init(objectID: objectID)
        func text(_ member: Member) -> String? {
            guard case .string(let value) = reader.value(member.rawValue), !value.isEmpty else { return nil }
            return value
        }
        func texts(_ member: Member, in array: String) -> [String] {
            guard case .array(let range) = reader.value(member.rawValue) else { return [] }
            return reader.strings(inArray: range, member: Array(array.utf8)).filter { !$0.isEmpty }
        }
        func flag(_ member: Member) -> Bool {
            if case .bool(true) = reader.value(member.rawValue) { true } else { false }
        }
        func year(_ member: Member) -> Int? {
            guard case .number(let range) = reader.value(member.rawValue) else { return nil }
            return reader.integer(range)
        }
        func joined(_ members: [Member]) -> String { members.compactMap(text).joined(separator: "\n") }

        title = text(.title) ?? ""
        tags = texts(.tags, in: "term").joined(separator: "\n")
        artist = joined([.artistDisplayName, .culture])
        medium = joined([.objectName, .medium, .classification])
        place = joined([.culture, .city, .state, .country, .region, .subregion, .locale])
        self.text =
            ([
                .accessionNumber, .artistDisplayBio, .artistNationality, .period, .dynasty, .reign, .portfolio,
                .department, .creditLine, .objectDate, .county,
            ].compactMap(text) + texts(.constituents, in: "name")).joined(separator: "\n")
        department = text(.department)
        classification = text(.classification)
        isHighlight = flag(.isHighlight)
        isOnView = text(.galleryNumber) != nil
        hasImage = text(.primaryImage) != nil || text(.primaryImageSmall) != nil
        isPublicDomain = flag(.isPublicDomain)
        beginDate = year(.objectBeginDate)
        endDate = year(.objectEndDate)
    }
}
