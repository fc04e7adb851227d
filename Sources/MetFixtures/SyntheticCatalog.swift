import MetCore
import MetEngine

/// Made-up, Met-shaped object records for IDs `1...count`, for load tests (`--synthetic N`).
///
/// Nothing is stored per ID. Each record is a pure function of its ID: independent SplitMix64
/// draws from the ID pick one entry from each of a few small tables (department, artist, place,
/// material, credit line, date, tags) plus some numbers (accession year, gallery, metadata date,
/// size). `body(for:)` writes the 57-key JSON from those picks, so the same ID always gives the
/// same bytes.
///
/// Search never builds records; it derives matches arithmetically. For one query it first works
/// out what every table entry contributes (`FixtureSearch.hits(in:)`, a few hundred fields in
/// all); then, per ID, it draws only the picks search needs, unions the precomputed hits, and
/// tests the only text built from the ID (title and accession number) in a reused scratch
/// buffer, and only when `q` could occur there at all. That is a few dozen arithmetic steps and
/// no allocation per ID: searching N = 100,000 IDs takes about 5–10 ms in a release build (up to
/// ~50 ms for a digits-only `q`), about ten times that in a debug build. The index entries come
/// from `FixtureRecord.fields(of:)`, the function that indexes the real fixtures, so a synthetic
/// record matches exactly as it would if it were decoded from its own JSON (a test checks this).
struct SyntheticCatalog: Sendable {
    /// The highest synthetic ID; 0 means there are none.
    let count: Int

    /// - Precondition: `count >= 0`.
    init(count: Int) {
        precondition(count >= 0, "the synthetic record count must not be negative")
        self.count = count
    }

    /// Whether `id` is one of the synthetic IDs.
    func contains(_ id: Int) -> Bool { id >= 1 && id <= count }

    // MARK: Images

    /// Whether the image host holds `file` in `rendition` (`original` or `web-large`) of the
    /// department whose image code is `code`: the pictures a synthetic record names
    /// (`SYN{id}.jpg` in both renditions, `SYN{id}_{n}.jpg` among the originals).
    func hasImage(code: Substring, rendition: Substring, file: Substring) -> Bool {
        guard file.hasPrefix("SYN"), file.hasSuffix(".jpg") else { return false }
        let name = file.dropFirst(3).dropLast(4)
        let parts = name.split(separator: "_", maxSplits: 1, omittingEmptySubsequences: false)
        guard let id = Int(parts[0]), String(id) == parts[0], contains(id) else { return false }
        let picks = Picks(id: id)
        guard picks.isPublicDomain, Self.departments[picks.department].imageCode == code else { return false }
        guard parts.count == 2 else { return rendition == "original" || rendition == "web-large" }
        guard let view = Int(parts[1]), String(view) == parts[1] else { return false }
        return rendition == "original" && (1...picks.additionalImages).contains(view)
    }

    // MARK: Records

    /// The JSON record for `id`: minified, the 57 current-schema keys in the Met's order, about
    /// 2.1 KB on average (1.5–2.9 KB). Takes about 20 µs in a release build.
    ///
    /// - Precondition: `contains(id)`.
    func body(for id: Int) -> [UInt8] {
        precondition(contains(id), "no synthetic record \(id)")
        let picks = Picks(id: id)
        let department = Self.departments[picks.department]
        let artist = Self.artists[picks.artist]
        let place = Self.places[picks.place]
        let material = Self.materials[picks.material]
        let era = Self.eras[picks.era]
        let tags = Self.tagSets[picks.tagSet].tags
        let imageBase = "https://images.metmuseum.org/CRDImages/\(department.imageCode)"
        let isPublicDomain = picks.isPublicDomain

        var json = JSONWriter()
        json.beginObject()
        json.member("objectID", int: id)
        json.member("isHighlight", bool: picks.isHighlight)
        var accessionNumber: [UInt8] = []
        Self.appendAccessionNumber(picks, to: &accessionNumber)
        json.member("accessionNumber", string: String(decoding: accessionNumber, as: UTF8.self))
        json.member("accessionYear", string: String(picks.accessionYear))
        json.member("isPublicDomain", bool: isPublicDomain)
        json.member("primaryImage", string: isPublicDomain ? "\(imageBase)/original/SYN\(id).jpg" : "")
        json.member("primaryImageSmall", string: isPublicDomain ? "\(imageBase)/web-large/SYN\(id).jpg" : "")
        json.key("additionalImages")
        json.beginArray()
        if isPublicDomain {
            for view in 0..<picks.additionalImages { json.string("\(imageBase)/original/SYN\(id)_\(view + 1).jpg") }
        }
        json.endArray()
        json.key("constituents")
        if artist.name.isEmpty {
            json.null()
        } else {
            json.beginArray()
            json.beginObject()
            json.member("constituentID", int: artist.constituentID)
            json.member("role", string: "Artist")
            json.member("name", string: artist.name)
            json.member("constituentULAN_URL", string: "")
            json.member("constituentWikidata_URL", string: "")
            json.member("gender", string: artist.gender)
            json.endObject()
            json.endArray()
        }
        json.member("department", string: department.name)
        json.member("objectName", string: material.objectName)
        json.member("title", string: Self.titlePrefix + String(id))
        json.member("culture", string: place.culture)
        json.member("period", string: place.period)
        json.member("dynasty", string: place.dynasty)
        json.member("reign", string: "")
        json.member("portfolio", string: "")
        json.member("artistRole", string: artist.name.isEmpty ? "" : "Artist")
        json.member("artistPrefix", string: "")
        json.member("artistDisplayName", string: artist.name)
        json.member("artistDisplayBio", string: artist.bio)
        json.member("artistSuffix", string: "")
        json.member("artistAlphaSort", string: artist.alphaSort)
        json.member("artistNationality", string: artist.nationality)
        json.member("artistBeginDate", string: artist.beginDate)
        json.member("artistEndDate", string: artist.endDate)
        json.member("artistGender", string: artist.gender)
        json.member("artistWikidata_URL", string: "")
        json.member("artistULAN_URL", string: "")
        json.member("objectDate", string: era.objectDate)
        json.member("objectBeginDate", int: era.begin)
        json.member("objectEndDate", int: era.end)
        json.member("medium", string: material.medium)
        let height = picks.heightMillimetres
        let width = picks.widthMillimetres
        // The frame adds 5 cm each way.
        let elements = [("Overall", height, width), ("Frame", height + 50, width + 50)]
        json.member(
            "dimensions",
            string: elements.map { "\($0.0): \(Double($0.1) / 10) x \(Double($0.2) / 10) cm" }.joined(separator: "\r\n")
        )
        json.key("measurements")
        json.beginArray()
        for (name, height, width) in elements {
            json.beginObject()
            json.member("elementName", string: name)
            json.key("elementDescription")
            json.null()
            json.key("elementMeasurements")
            json.beginObject()
            json.key("Height")
            json.double(Double(height) / 10)
            json.key("Width")
            json.double(Double(width) / 10)
            json.endObject()
            json.endObject()
        }
        json.endArray()
        json.member("creditLine", string: Self.creditLines[picks.credit].line)
        json.member("geographyType", string: place.geographyType)
        json.member("city", string: place.city)
        json.member("state", string: place.state)
        json.member("county", string: "")
        json.member("country", string: place.country)
        json.member("region", string: place.region)
        json.member("subregion", string: place.subregion)
        json.member("locale", string: "")
        json.member("locus", string: "")
        json.member("excavation", string: "")
        json.member("river", string: "")
        json.member("classification", string: material.classification)
        json.member("rightsAndReproduction", string: isPublicDomain ? "" : "© Synthetic Estate")
        json.member("linkResource", string: "")
        json.member("metadataDate", string: picks.metadataDate)
        json.member("repository", string: "Metropolitan Museum of Art, New York, NY")
        json.member("objectURL", string: "https://www.metmuseum.org/art/collection/search/\(id)")
        json.key("tags")
        if let tags {
            json.beginArray()
            for tag in tags {
                json.beginObject()
                json.member("term", string: tag.term)
                json.member("AAT_URL", string: tag.aatURL)
                json.member("Wikidata_URL", string: tag.wikidataURL)
                json.endObject()
            }
            json.endArray()
        } else {
            json.null()
        }
        json.member("objectWikidata_URL", string: "")
        json.member("isTimelineWork", bool: picks.isTimelineWork)
        json.member("GalleryNumber", string: picks.gallery.map(String.init) ?? "")
        json.endObject()
        return json.bytes
    }

    // MARK: Search and lists

    /// Appends the IDs of matching synthetic records, ascending, to the two groups.
    ///
    /// - Parameters:
    ///   - search: the parsed query.
    ///   - skipping: IDs served by a real fixture instead, ascending; they are left out.
    ///   - titleMatches: receives IDs whose title contains `q`.
    ///   - otherMatches: receives the other matching IDs.
    func search(
        _ search: FixtureSearch, skipping: [Int], titleMatches: inout [Int], otherMatches: inout [Int]
    ) {
        guard count > 0 else { return }
        let departmentHits = Self.departments.map { search.hits(in: $0.fields) }
        let artistHits = Self.artists.map { search.hits(in: $0.fields) }
        let placeHits = Self.places.map { search.hits(in: $0.fields) }
        let materialHits = Self.materials.map { search.hits(in: $0.fields) }
        let creditHits = Self.creditLines.map { search.hits(in: $0.fields) }
        let eraHits = Self.eras.map { search.hits(in: $0.fields) }
        let tagHits = Self.tagSets.map { search.hits(in: $0.fields) }
        // The title and accession number are the only text built from the ID; skip building them
        // when q has a byte they can never contain.
        let digits = Array(UInt8(ascii: "0")...UInt8(ascii: "9"))
        let titleBytes = Set(Self.foldedTitlePrefix + digits)
        let accessionBytes = Set(digits + [UInt8(ascii: ".")])
        let checkTitle = search.query?.allSatisfy { titleBytes.contains($0) } ?? false
        let checkAccession = search.query?.allSatisfy { accessionBytes.contains($0) } ?? false
        var scratch: [UInt8] = []
        scratch.reserveCapacity(64)
        var skips = skipping.makeIterator()
        var nextSkip = skips.next()

        for id in 1...count {
            while let skip = nextSkip, skip < id { nextSkip = skips.next() }
            if nextSkip == id { continue }
            let picks = Picks(id: id)
            let department = picks.department
            var hits = departmentHits[department]
            hits.formUnion(artistHits[picks.artist])
            hits.formUnion(placeHits[picks.place])
            hits.formUnion(materialHits[picks.material])
            hits.formUnion(creditHits[picks.credit])
            hits.formUnion(tagHits[picks.tagSet])
            let era = picks.era
            hits.formUnion(eraHits[era])
            if checkTitle {
                scratch.removeAll(keepingCapacity: true)
                scratch.append(contentsOf: Self.foldedTitlePrefix)
                scratch.appendDecimal(id)
                if search.queryOccurs(in: scratch) { hits.queryRoles.formUnion(FixtureRecord.titleRoles) }
            }
            if checkAccession {
                scratch.removeAll(keepingCapacity: true)
                Self.appendAccessionNumber(picks, to: &scratch)
                if search.queryOccurs(in: scratch) { hits.queryRoles.formUnion(FixtureRecord.accessionRoles) }
            }
            let attributes = FixtureRecord.Attributes(
                id: id,
                isHighlight: picks.isHighlight,
                isOnView: picks.isOnView,
                departmentID: Self.departments[department].id,
                beginDate: Self.eras[era].begin,
                endDate: Self.eras[era].end
            )
            switch search.placement(of: attributes, hits: hits) {
            case .titleMatch: titleMatches.append(id)
            case .otherMatch: otherMatches.append(id)
            case nil: break
            }
        }
    }

    /// The synthetic IDs an `/objects` list holds, ascending.
    ///
    /// - Parameters:
    ///   - departments: keep only these department IDs; nil keeps all.
    ///   - changedSince: keep only records whose metadata date (as `yyyymmdd`) is this day or later; nil keeps all.
    ///   - skipping: IDs to leave out (served by a fixture, or withdrawn), ascending.
    func list(departments: Set<Int>?, changedSince: Int?, skipping: [Int]) -> [Int] {
        guard count > 0 else { return [] }
        var ids: [Int] = []
        var skips = skipping.makeIterator()
        var nextSkip = skips.next()
        for id in 1...count {
            while let skip = nextSkip, skip < id { nextSkip = skips.next() }
            if nextSkip == id { continue }
            let picks = Picks(id: id)
            if let departments, !departments.contains(Self.departments[picks.department].id) { continue }
            if let changedSince, picks.metadataDay < changedSince { continue }
            ids.append(id)
        }
        return ids
    }

    // MARK: Per-ID picks

    /// One pseudo-random choice about a record. Each is drawn on its own from the ID (position
    /// `rawValue` of a SplitMix64 stream seeded with the ID), so search draws only what it tests.
    private enum Draw: UInt64 {
        case department, artist, place, material, credit, era, tagSet, accessionYear, isHighlight
        case isPublicDomain, isTimelineWork, isOnView, gallery, additionalImages, height, width
        case metadataYear, metadataMonth, metadataDay, metadataSeconds, metadataMillis

        /// The draw is uniform over `0..<range`.
        var range: Int {
            switch self {
            case .department: SyntheticCatalog.departments.count
            case .artist: SyntheticCatalog.artists.count
            case .place: SyntheticCatalog.places.count
            case .material: SyntheticCatalog.materials.count
            case .credit: SyntheticCatalog.creditLines.count
            case .era: SyntheticCatalog.eras.count
            case .tagSet: SyntheticCatalog.tagSets.count
            case .accessionYear: 150
            case .isHighlight: 40
            case .isPublicDomain: 5
            case .isTimelineWork: 8
            case .isOnView: 4
            case .gallery: 900
            case .additionalImages: 3
            case .height, .width: 1_900
            case .metadataYear: 8
            case .metadataMonth: 12
            case .metadataDay: 28
            case .metadataSeconds: 25 * 60
            case .metadataMillis: 1_000
            }
        }
    }

    /// Everything about one synthetic record that is not a fixed table: each property is a pure
    /// function of the ID, computed when read.
    private struct Picks {
        let id: Int

        private func draw(_ which: Draw) -> Int {
            // SplitMix64's output function at stream position rawValue + 1.
            var z =
                UInt64(truncatingIfNeeded: id) &* 0xD1B5_4A32_D192_ED03 &+ (which.rawValue &+ 1)
                &* 0x9E37_79B9_7F4A_7C15
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            z ^= z >> 31
            return Int(z % UInt64(which.range))
        }

        var department: Int { draw(.department) }
        var artist: Int { draw(.artist) }
        var place: Int { draw(.place) }
        var material: Int { draw(.material) }
        var credit: Int { draw(.credit) }
        var era: Int { draw(.era) }
        var tagSet: Int { draw(.tagSet) }
        var accessionYear: Int { 1870 + draw(.accessionYear) }
        /// One record in 40.
        var isHighlight: Bool { draw(.isHighlight) == 0 }
        /// Four records in five.
        var isPublicDomain: Bool { draw(.isPublicDomain) != 0 }
        var isTimelineWork: Bool { draw(.isTimelineWork) == 0 }
        /// One record in four.
        var isOnView: Bool { draw(.isOnView) == 0 }
        /// The gallery number, or nil when the work is not on view.
        var gallery: Int? { isOnView ? 100 + draw(.gallery) : nil }
        /// 1 to 3 (written only for public-domain records).
        var additionalImages: Int { 1 + draw(.additionalImages) }
        /// 10.0 to 199.9 cm.
        var heightMillimetres: Int { 100 + draw(.height) }
        var widthMillimetres: Int { 100 + draw(.width) }
        /// The metadata date as `yyyymmdd`, 2019-01-01 to 2026-12-28.
        var metadataDay: Int {
            (2019 + draw(.metadataYear)) * 10_000 + (1 + draw(.metadataMonth)) * 100 + (1 + draw(.metadataDay))
        }

        /// The metadata date as the Met writes it (`2024-05-17T04:53:12.345Z`): the day, a time
        /// between 04:35 and 05:00 UTC, milliseconds.
        var metadataDate: String {
            func pad(_ value: Int, _ width: Int) -> String {
                let digits = String(value)
                return String(repeating: "0", count: max(0, width - digits.count)) + digits
            }
            let day = metadataDay
            let seconds = 35 * 60 + draw(.metadataSeconds)
            let date = "\(day / 10_000)-\(pad(day / 100 % 100, 2))-\(pad(day % 100, 2))"
            let time = "04:\(pad(seconds / 60, 2)):\(pad(seconds % 60, 2)).\(pad(draw(.metadataMillis), 3))"
            return "\(date)T\(time)Z"
        }
    }

    // MARK: Text built from the ID

    /// Every synthetic title is this followed by the ID.
    static let titlePrefix = "Synthetic Study No. "
    private static let foldedTitlePrefix = Array(titlePrefix.lowercased().utf8)

    /// Appends `<accession year>.<id>`, the accession number.
    private static func appendAccessionNumber(_ picks: Picks, to bytes: inout [UInt8]) {
        bytes.appendDecimal(picks.accessionYear)
        bytes.append(UInt8(ascii: "."))
        bytes.appendDecimal(picks.id)
    }

    // MARK: Tables

    /// A department: the ID filters use, the name records carry, the image folder code.
    struct Department: Sendable {
        var id: Int
        var name: String
        var imageCode: String
        var fields: [FixtureRecord.Field] { FixtureRecord.fields(of: .init(department: name)) }
    }

    /// A made-up maker; an empty name means "no constituents".
    struct Artist: Sendable {
        var name: String
        var bio: String
        var nationality: String
        var alphaSort: String
        var beginDate: String
        var endDate: String
        var gender: String
        var constituentID: Int
        var fields: [FixtureRecord.Field] {
            FixtureRecord.fields(
                of: .init(
                    artistDisplayName: name, artistDisplayBio: bio, artistNationality: nationality,
                    constituents: name.isEmpty ? nil : [.init(name: name)]))
        }
    }

    /// Culture and place fields.
    struct Place: Sendable {
        var culture: String
        var period: String
        var dynasty: String
        var geographyType: String
        var city: String
        var state: String
        var country: String
        var region: String
        var subregion: String
        var fields: [FixtureRecord.Field] {
            FixtureRecord.fields(
                of: .init(
                    culture: culture, period: period, dynasty: dynasty, city: city, state: state, country: country,
                    region: region, subregion: subregion))
        }
    }

    /// Kind of object and what it is made of.
    struct Material: Sendable {
        var objectName: String
        var medium: String
        var classification: String
        var fields: [FixtureRecord.Field] {
            FixtureRecord.fields(of: .init(objectName: objectName, medium: medium, classification: classification))
        }
    }

    /// A credit line.
    struct Credit: Sendable {
        var line: String
        var fields: [FixtureRecord.Field] { FixtureRecord.fields(of: .init(creditLine: line)) }
    }

    /// An object date: the text and the years (negative = BCE).
    struct Era: Sendable {
        var objectDate: String
        var begin: Int
        var end: Int
        var fields: [FixtureRecord.Field] { FixtureRecord.fields(of: .init(objectDate: objectDate)) }
    }

    /// One subject tag as the Met writes it.
    struct Tag: Sendable {
        var term: String
        var aatURL: String
        var wikidataURL: String
    }

    /// The tags of a record; nil is written as `"tags": null`, as the Met does for untagged works.
    struct TagSet: Sendable {
        var tags: [Tag]?
        var fields: [FixtureRecord.Field] {
            FixtureRecord.fields(of: .init(tags: tags?.map { .init(term: $0.term) }))
        }
    }

    /// The Met's departments, with the names records use (which differ from `/departments` for
    /// 1, 5, 15 and 21, as in real records).
    static let departments: [Department] = [
        Department(id: 1, name: "The American Wing", imageCode: "ad"),
        Department(id: 3, name: "Ancient Near Eastern Art", imageCode: "an"),
        Department(id: 4, name: "Arms and Armor", imageCode: "aa"),
        Department(id: 5, name: "The Michael C. Rockefeller Wing", imageCode: "ao"),
        Department(id: 6, name: "Asian Art", imageCode: "as"),
        Department(id: 7, name: "The Cloisters", imageCode: "cl"),
        Department(id: 8, name: "The Costume Institute", imageCode: "ci"),
        Department(id: 9, name: "Drawings and Prints", imageCode: "dp"),
        Department(id: 10, name: "Egyptian Art", imageCode: "eg"),
        Department(id: 11, name: "European Paintings", imageCode: "ep"),
        Department(id: 12, name: "European Sculpture and Decorative Arts", imageCode: "es"),
        Department(id: 13, name: "Greek and Roman Art", imageCode: "gr"),
        Department(id: 14, name: "Islamic Art", imageCode: "is"),
        Department(id: 15, name: "Robert Lehman Collection", imageCode: "rl"),
        Department(id: 16, name: "The Libraries", imageCode: "li"),
        Department(id: 17, name: "Medieval Art", imageCode: "md"),
        Department(id: 18, name: "Musical Instruments", imageCode: "mi"),
        Department(id: 19, name: "Photographs", imageCode: "ph"),
        Department(id: 21, name: "Modern and Contemporary Art", imageCode: "ma"),
    ]

    /// Made-up makers (so that searching a real artist's name finds only real fixtures), and one
    /// "no maker" entry.
    static let artists: [Artist] = [
        Artist(
            name: "Adriana Velde", bio: "Dutch, Haarlem 1612–1671", nationality: "Dutch", alphaSort: "Velde, Adriana",
            beginDate: "1612", endDate: "1671", gender: "Female", constituentID: 990_001),
        Artist(
            name: "Tomás Arriaga", bio: "Spanish, Seville 1598–1660", nationality: "Spanish",
            alphaSort: "Arriaga, Tomás", beginDate: "1598", endDate: "1660", gender: "", constituentID: 990_002),
        Artist(
            name: "Tanabe Hiroshi", bio: "Japanese, 1760–1829", nationality: "Japanese", alphaSort: "Tanabe Hiroshi",
            beginDate: "1760", endDate: "1829", gender: "", constituentID: 990_003),
        Artist(
            name: "Marguerite Olland", bio: "French, Lyon 1834–1907", nationality: "French",
            alphaSort: "Olland, Marguerite", beginDate: "1834", endDate: "1907", gender: "Female",
            constituentID: 990_004),
        Artist(
            name: "Elias Brandt", bio: "German, Nuremberg 1485–1541", nationality: "German", alphaSort: "Brandt, Elias",
            beginDate: "1485", endDate: "1541", gender: "", constituentID: 990_005),
        Artist(
            name: "Chen Wenyu", bio: "Chinese, 1645–1718", nationality: "Chinese", alphaSort: "Chen Wenyu",
            beginDate: "1645", endDate: "1718", gender: "", constituentID: 990_006),
        Artist(
            name: "Samuel Whitcombe", bio: "American, Boston 1798–1860", nationality: "American",
            alphaSort: "Whitcombe, Samuel", beginDate: "1798", endDate: "1860", gender: "", constituentID: 990_007),
        Artist(
            name: "Giulia Renzi", bio: "Italian, Florence 1520–1579", nationality: "Italian",
            alphaSort: "Renzi, Giulia",
            beginDate: "1520", endDate: "1579", gender: "Female", constituentID: 990_008),
        Artist(
            name: "Nasir al-Din Kashi", bio: "Iranian, active ca. 1590–1620", nationality: "Iranian",
            alphaSort: "Kashi, Nasir al-Din", beginDate: "1590", endDate: "1620", gender: "", constituentID: 990_009),
        Artist(
            name: "Ada Kerrigan", bio: "American, 1902–1988", nationality: "American", alphaSort: "Kerrigan, Ada",
            beginDate: "1902", endDate: "1988", gender: "Female", constituentID: 990_010),
        Artist(
            name: "Otto Lindqvist", bio: "Swedish, Stockholm 1871–1944", nationality: "Swedish",
            alphaSort: "Lindqvist, Otto", beginDate: "1871", endDate: "1944", gender: "", constituentID: 990_011),
        Artist(
            name: "Kofi Mensah", bio: "Ghanaian, born 1958", nationality: "Ghanaian", alphaSort: "Mensah, Kofi",
            beginDate: "1958", endDate: "", gender: "", constituentID: 990_012),
        Artist(
            name: "", bio: "", nationality: "", alphaSort: "", beginDate: "", endDate: "", gender: "",
            constituentID: 0),
    ]

    /// Cultures and places, including one with no place data at all.
    static let places: [Place] = [
        Place(
            culture: "French", period: "", dynasty: "", geographyType: "Made in", city: "Paris", state: "",
            country: "France", region: "", subregion: ""),
        Place(
            culture: "Japan", period: "Edo period (1615–1868)", dynasty: "", geographyType: "", city: "", state: "",
            country: "", region: "", subregion: ""),
        Place(
            culture: "China", period: "Qing dynasty (1644–1911)", dynasty: "", geographyType: "", city: "",
            state: "", country: "", region: "", subregion: ""),
        Place(
            culture: "American", period: "", dynasty: "", geographyType: "Made in", city: "Philadelphia",
            state: "Pennsylvania", country: "United States", region: "Mid-Atlantic", subregion: ""),
        Place(
            culture: "", period: "Late Period", dynasty: "Dynasty 26", geographyType: "From", city: "", state: "",
            country: "Egypt", region: "Upper Egypt", subregion: "Thebes"),
        Place(
            culture: "Italian", period: "", dynasty: "", geographyType: "Made in", city: "Florence", state: "",
            country: "Italy", region: "Tuscany", subregion: ""),
        Place(
            culture: "Netherlandish", period: "", dynasty: "", geographyType: "Made in", city: "Antwerp",
            state: "", country: "Belgium", region: "", subregion: ""),
        Place(
            culture: "", period: "Safavid period (1501–1722)", dynasty: "", geographyType: "Made in",
            city: "Isfahan", state: "", country: "Iran", region: "", subregion: ""),
        Place(
            culture: "Cypriot", period: "Late Cypriot II", dynasty: "", geographyType: "", city: "", state: "",
            country: "", region: "Cyprus", subregion: ""),
        Place(
            culture: "Asante", period: "", dynasty: "", geographyType: "Made in", city: "Kumasi", state: "",
            country: "Ghana", region: "West Africa", subregion: ""),
        Place(
            culture: "", period: "", dynasty: "", geographyType: "", city: "", state: "", country: "", region: "",
            subregion: ""),
    ]

    /// Object names, media and classifications in the Met's spelling.
    static let materials: [Material] = [
        Material(objectName: "Painting", medium: "Oil on canvas", classification: "Paintings"),
        Material(objectName: "Print", medium: "Engraving", classification: "Prints"),
        Material(objectName: "Drawing", medium: "Pen and brown ink", classification: "Drawings"),
        Material(objectName: "Vase", medium: "Terracotta", classification: "Vases"),
        Material(objectName: "Bowl", medium: "Porcelain painted in underglaze blue", classification: "Ceramics"),
        Material(objectName: "Quilt", medium: "Cotton, silk", classification: "Textiles-Quilted"),
        Material(objectName: "Statuette", medium: "Bronze", classification: "Sculpture-Bronze"),
        Material(objectName: "Photograph", medium: "Gelatin silver print", classification: "Photographs"),
        Material(objectName: "Side chair", medium: "Walnut, upholstery", classification: "Furniture"),
        Material(objectName: "Helmet", medium: "Steel, brass", classification: "Helmets"),
        Material(objectName: "Hanging scroll", medium: "Ink and color on silk", classification: "Paintings"),
        Material(objectName: "Brooch", medium: "Gold, enamel", classification: "Jewelry"),
    ]

    /// Credit lines (without the year, which would make them depend on the ID).
    static let creditLines: [Credit] = [
        Credit(line: "Rogers Fund"),
        Credit(line: "Gift of the Synthetic Collection Trust"),
        Credit(line: "Purchase, Fixture Foundation Gift"),
        Credit(line: "Bequest of Eleanor Sample"),
        Credit(line: "Harris Brisbane Dick Fund"),
        Credit(line: "Fletcher Fund"),
    ]

    /// Sixty date ranges from 1500 B.C. to the twentieth century.
    static let eras: [Era] = (0..<60).map { step in
        let begin = -1500 + step * 58
        let end = begin + [0, 10, 25, 50][step % 4]
        let text: String
        switch (begin < 0, begin == end) {
        case (true, true): text = "\(-begin) B.C."
        case (true, false): text = "ca. \(-begin)–\(-end) B.C."
        case (false, true): text = "\(begin)"
        case (false, false): text = "ca. \(begin)–\(end)"
        }
        return Era(objectDate: text, begin: begin, end: end)
    }

    /// Subject tags (real AAT terms), and two entries without tags.
    static let tagSets: [TagSet] = {
        func tag(_ term: String, _ aat: String, _ wikidata: String) -> Tag {
            Tag(
                term: term, aatURL: "http://vocab.getty.edu/page/aat/\(aat)",
                wikidataURL: "https://www.wikidata.org/wiki/\(wikidata)")
        }
        let landscapes = tag("Landscapes", "300132294", "Q191163")
        let cypresses = tag("Cypresses", "300343641", "Q146911")
        let portraits = tag("Portraits", "300015637", "Q134307")
        let men = tag("Men", "300025928", "Q8441")
        let women = tag("Women", "300025943", "Q467")
        let animals = tag("Animals", "300249525", "Q729")
        let birds = tag("Birds", "300266506", "Q5113")
        let horses = tag("Horses", "300250148", "Q726")
        let stillLife = tag("Still Life", "300015638", "Q170571")
        let dogs = tag("Dogs", "300265714", "Q144")
        let cats = tag("Cats", "300265960", "Q146")
        let ornament = tag("Ornament", "300164595", "Q335261")
        let geometry = tag("Geometry", "300054529", "Q8087")
        let couples = tag("Couples", "300379217", "Q219160")
        let poetry = tag("Poetry", "300055931", "Q482")
        return [
            TagSet(tags: [landscapes, cypresses]), TagSet(tags: [portraits, men]), TagSet(tags: [portraits, women]),
            TagSet(tags: [animals, birds]), TagSet(tags: [horses, men]), TagSet(tags: [stillLife]),
            TagSet(tags: [dogs, cats]), TagSet(tags: [ornament, geometry]), TagSet(tags: [couples, poetry]),
            TagSet(tags: nil), TagSet(tags: nil),
        ]
    }()
}
