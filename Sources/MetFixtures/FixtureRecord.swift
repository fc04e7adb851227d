import MetCore
import MetEngine

/// What the fake Met knows about one object for search and list filters: a few attributes and
/// the searchable text fields, already folded to lower case. The served bytes are kept elsewhere
/// (`FixtureArchive`), untouched; this is only an index entry. Immutable, so `Sendable`.
struct FixtureRecord: Sendable {
    /// The non-text facts that search and list filters test.
    struct Attributes: Sendable, Equatable {
        /// `objectID`.
        var id: Int
        /// `isHighlight`; false when absent.
        var isHighlight: Bool
        /// Whether `GalleryNumber` is non-empty (what `isOnView` filters on).
        var isOnView: Bool
        /// The department ID the record's `department` name maps to (aliases included), or nil.
        var departmentID: Int?
        /// `objectBeginDate` in years (negative = BCE), or nil when absent.
        var beginDate: Int?
        /// `objectEndDate` in years, or nil when absent.
        var endDate: Int?
    }

    /// Which searches a text field takes part in.
    struct Roles: OptionSet, Sendable {
        let rawValue: UInt8
        /// Searched by a plain `q`.
        static let text = Roles(rawValue: 1 << 0)
        /// The title: searched by `title=true`, and decides the title-first order.
        static let title = Roles(rawValue: 1 << 1)
        /// A tag term: searched by `tags=true`.
        static let tags = Roles(rawValue: 1 << 2)
        /// Artist name or culture: searched by `artistOrCulture=true`.
        static let artistOrCulture = Roles(rawValue: 1 << 3)
        /// Tested by the case-sensitive `medium` filter.
        static let medium = Roles(rawValue: 1 << 4)
        /// Tested by the case-sensitive `geoLocation` filter.
        static let geo = Roles(rawValue: 1 << 5)
    }

    /// One non-empty text field.
    struct Field: Sendable {
        /// What the field is searched for.
        var roles: Roles
        /// The value lower-cased (Unicode-aware), as UTF-8: what `q` is matched against.
        var folded: [UInt8]
        /// The value as written, as UTF-8: what `medium` and `geoLocation` terms are matched against.
        var exact: [UInt8]

        init(_ value: String, roles: Roles) {
            self.roles = roles
            folded = Array(value.lowercased().utf8)
            exact = Array(value.utf8)
        }
    }

    /// Roles of `title`; shared with the synthetic records so both index titles alike.
    static let titleRoles: Roles = [.text, .title]
    /// Roles of `accessionNumber`; shared with the synthetic records.
    static let accessionRoles: Roles = [.text]

    /// The attributes filters test.
    var attributes: Attributes
    /// `metadataDate` as sent (ISO 8601, UTC), or "" when absent.
    var metadataDate: String
    /// The searchable text fields; see `fields(of:)` for which keys they are.
    var fields: [Field]

    /// Indexes a decoded record.
    ///
    /// - Parameters:
    ///   - record: the leniently decoded keys.
    ///   - id: the object ID (the file name's, which the caller has checked against `objectID`).
    ///   - departmentID: what the caller's department table says `record.department` is.
    init(_ record: Fields, id: Int, departmentID: Int?) {
        attributes = Attributes(
            id: id,
            isHighlight: record.isHighlight ?? false,
            isOnView: !(record.galleryNumber ?? "").isEmpty,
            departmentID: departmentID,
            beginDate: record.objectBeginDate,
            endDate: record.objectEndDate
        )
        metadataDate = record.metadataDate ?? ""
        fields = Self.fields(of: record)
    }

    /// The searchable text fields of `record`, empty values left out. These keys are "the text
    /// fields" a plain `q` searches: title, accession number, artist name, bio and nationality,
    /// constituent names, culture, period, dynasty, reign, portfolio, object name, medium,
    /// classification, department, credit line, object date, the place fields and tag terms.
    /// URLs, dimensions and rights lines are not searched.
    static func fields(of record: Fields) -> [Field] {
        let place: Roles = [.text, .geo]
        let material: Roles = [.text, .medium]
        var pairs: [(String?, Roles)] = [
            (record.title, titleRoles),
            (record.accessionNumber, accessionRoles),
            (record.artistDisplayName, [.text, .artistOrCulture]),
            (record.artistDisplayBio, .text),
            (record.artistNationality, .text),
            (record.culture, [.text, .artistOrCulture, .geo]),
            (record.period, .text),
            (record.dynasty, .text),
            (record.reign, .text),
            (record.portfolio, .text),
            (record.objectName, material),
            (record.medium, material),
            (record.classification, material),
            (record.department, .text),
            (record.creditLine, .text),
            (record.objectDate, .text),
            (record.city, place),
            (record.state, place),
            (record.county, .text),
            (record.country, place),
            (record.region, place),
            (record.subregion, place),
            (record.locale, place),
        ]
        for constituent in record.constituents ?? [] { pairs.append((constituent.name, .text)) }
        for tag in record.tags ?? [] { pairs.append((tag.term, [.text, .tags])) }
        return pairs.compactMap { value, roles in
            guard let value, !value.isEmpty else { return nil }
            return Field(value, roles: roles)
        }
    }
}

extension FixtureRecord {
    /// The keys of an object record that the index reads. Every key is optional and a value of
    /// the wrong type counts as absent, because the schema changed over the years
    /// (docs/MET-API.md §3.2).
    /// Property names are the Met's JSON keys, except `galleryNumber` (the Met's `GalleryNumber`).
    struct Fields: Sendable {
        /// One `constituents` entry; only the name is searched.
        struct Constituent: Sendable {
            var name: String?
        }

        /// One `tags` entry: `{"term": …}` in today's schema, a bare string in 2018's.
        struct Tag: Sendable {
            var term: String?
        }

        var objectID: Int?
        var isHighlight: Bool?
        var accessionNumber: String?
        var title: String?
        var artistDisplayName: String?
        var artistDisplayBio: String?
        var artistNationality: String?
        var constituents: [Constituent]?
        var culture: String?
        var period: String?
        var dynasty: String?
        var reign: String?
        var portfolio: String?
        var objectName: String?
        var medium: String?
        var classification: String?
        var department: String?
        var creditLine: String?
        var objectDate: String?
        var objectBeginDate: Int?
        var objectEndDate: Int?
        var city: String?
        var state: String?
        var county: String?
        var country: String?
        var region: String?
        var subregion: String?
        var locale: String?
        var tags: [Tag]?
        var metadataDate: String?
        var galleryNumber: String?
    }
}

extension FixtureRecord.Fields: Decodable {
    private enum CodingKeys: String, CodingKey {
        case objectID, isHighlight, accessionNumber, title, artistDisplayName, artistDisplayBio
        case artistNationality, constituents, culture, period, dynasty, reign, portfolio, objectName
        case medium, classification, department, creditLine, objectDate, objectBeginDate, objectEndDate
        case city, state, county, country, region, subregion, locale, tags, metadataDate
        case galleryNumber = "GalleryNumber"
    }

    init(from decoder: any Decoder) throws {
        let keys = try decoder.container(keyedBy: CodingKeys.self)
        func lenient<Value: Decodable>(_ key: CodingKeys) -> Value? {
            try? keys.decodeIfPresent(Value.self, forKey: key)
        }
        objectID = lenient(.objectID)
        isHighlight = lenient(.isHighlight)
        accessionNumber = lenient(.accessionNumber)
        title = lenient(.title)
        artistDisplayName = lenient(.artistDisplayName)
        artistDisplayBio = lenient(.artistDisplayBio)
        artistNationality = lenient(.artistNationality)
        constituents = lenient(.constituents)
        culture = lenient(.culture)
        period = lenient(.period)
        dynasty = lenient(.dynasty)
        reign = lenient(.reign)
        portfolio = lenient(.portfolio)
        objectName = lenient(.objectName)
        medium = lenient(.medium)
        classification = lenient(.classification)
        department = lenient(.department)
        creditLine = lenient(.creditLine)
        objectDate = lenient(.objectDate)
        objectBeginDate = lenient(.objectBeginDate)
        objectEndDate = lenient(.objectEndDate)
        city = lenient(.city)
        state = lenient(.state)
        county = lenient(.county)
        country = lenient(.country)
        region = lenient(.region)
        subregion = lenient(.subregion)
        locale = lenient(.locale)
        tags = lenient(.tags)
        metadataDate = lenient(.metadataDate)
        galleryNumber = lenient(.galleryNumber)
    }
}

extension FixtureRecord.Fields.Constituent: Decodable {
    private enum CodingKeys: String, CodingKey { case name }

    init(from decoder: any Decoder) throws {
        let keys = try decoder.container(keyedBy: CodingKeys.self)
        name = try? keys.decodeIfPresent(String.self, forKey: .name)
    }
}

extension FixtureRecord.Fields.Tag: Decodable {
    private enum CodingKeys: String, CodingKey { case term }

    init(from decoder: any Decoder) throws {
        if let term = try? decoder.singleValueContainer().decode(String.self) {
            self.term = term
            return
        }
        let keys = try decoder.container(keyedBy: CodingKeys.self)
        term = try? keys.decodeIfPresent(String.self, forKey: .term)
    }
}
