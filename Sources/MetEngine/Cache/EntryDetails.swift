/// What the server needs to know about an entry beyond its bytes, read once when the entry is
/// stored so that serving it never decodes JSON.
public enum EntryDetails: Sendable, Equatable {
    /// Nothing beyond the bytes (departments, documents, negative entries).
    case none
    /// An object record's few members that search, sorting and the widget use.
    case object(ObjectSummary)
    /// An ID list (`/objects`, a v1 search, or one v1.1 search page).
    case ids(IDList)
    /// A picture's type, pixel size and the image host's validators.
    case image(ImageDetails)

    /// Reads the details of a validated 200 body of `kind`; `.none` when there are none to read
    /// or the body lacks them.
    /// The body must be one valid JSON object whose members of those names have the types given
    /// (`ObjectSummary`, `IDList`): a member that is absent or null is nil (`objectID` and `total`
    /// are required), one of another type refuses the whole body.
    package static func read(_ body: [UInt8], kind: ResourceKind) -> EntryDetails {
        switch kind {
        case .object: ObjectSummary(json: body).map(EntryDetails.object) ?? .none
        case .objectList, .search: IDList(json: body).map(EntryDetails.ids) ?? .none
        case .departments, .document, .image: .none
        }
    }

    /// Bytes the details take in memory, charged to the entry's cost.
    package var cost: Int {
        switch self {
        case .none: 0
        case .object(let summary): summary.cost
        case .ids(let list): list.ids.count * MemoryLayout<Int>.stride + CacheEntry.heapBlock
        case .image(let image): image.cost
        }
    }
}

/// An ID list as the Met sends it: `{"total": N, "objectIDs": [...] | null}`.
public struct IDList: Sendable, Equatable {
    /// The Met's count of matches (for v1.1, of all matches, not only this page).
    public let total: Int
    /// The IDs in the Met's order; empty when the Met sent null.
    public let ids: [Int]
    /// Whether no ID appears twice in `ids`: found out when the list is made (in the task that
    /// fetched or read it, never on a loop), so that `/random` can draw from a list of half a
    /// million IDs without looking for repeats itself.
    public let isUnique: Bool

    public init(total: Int, ids: [Int]) {
        self.total = total
        self.ids = ids
        isUnique = Self.hasNoRepeats(ids)
    }

    private static func hasNoRepeats(_ ids: [Int]) -> Bool {
        var seen = Set<Int>(minimumCapacity: ids.count)
        return ids.allSatisfy { seen.insert($0).inserted }
    }

    private static let names = ["total", "objectIDs"].map { Array($0.utf8) }

    /// The list `json` holds: nil when it is not a valid JSON object with an integer `total` and
    /// an array of integers, or null, or nothing, as `objectIDs`.
    package init?(json: [UInt8]) {
        guard let reader = JSONReader(json, names: Self.names), case .number(let total) = reader.value(0),
            let total = reader.integer(total)
        else { return nil }
        switch reader.value(1) {
        case .absent, .null: self.init(total: total, ids: [])
        case .array(let range):
            guard let ids = reader.integers(range) else { return nil }
            self.init(total: total, ids: ids)
        default: return nil
        }
    }
}

/// The members of an object record that search, sorting, the widget and deep links use. Every
/// member is optional: the Met's schema has changed over the years (docs/MET-API.md §3.2).
public struct ObjectSummary: Sendable, Equatable {
    public var objectID: Int
    public var title: String?
    public var artistDisplayName: String?
    public var objectDate: String?
    public var objectBeginDate: Int?
    public var objectEndDate: Int?
    public var medium: String?
    public var creditLine: String?
    public var primaryImage: String?
    public var primaryImageSmall: String?
    public var isPublicDomain: Bool?
    public var objectURL: String?

    /// A summary of `objectID` with no other member known.
    public init(objectID: Int) {
        self.objectID = objectID
    }

    /// Whether the record carries an image URL (the Met leaves them empty for works that are not
    /// public domain, even when `hasImages=true` matched them).
    public var hasImage: Bool {
        !(primaryImageSmall ?? "").isEmpty || !(primaryImage ?? "").isEmpty
    }

    /// What its strings take from the allocator (the rest is inline in the entry, and charged
    /// with it): those over 15 UTF-8 bytes, which Swift keeps inline, are heap blocks.
    /// Summed member by member: an array of them, made on every admission into memory, cost
    /// 1.5 % of a disk hit.
    package var cost: Int {
        func heap(_ text: String?) -> Int {
            guard let count = text?.utf8.count, count > 15 else { return 0 }
            return count + CacheEntry.heapBlock
        }
        return heap(title) + heap(artistDisplayName) + heap(objectDate) + heap(medium) + heap(creditLine)
            + heap(primaryImage) + heap(primaryImageSmall) + heap(objectURL)
    }

    private static let names = [
        "objectID", "title", "artistDisplayName", "objectDate", "objectBeginDate", "objectEndDate", "medium",
        "creditLine", "primaryImage", "primaryImageSmall", "isPublicDomain", "objectURL",
    ].map { Array($0.utf8) }

    /// The summary of the record `json` holds: nil when it is not a valid JSON object with an
    /// integer `objectID`, or when a member read here has another type than the property's.
    package init?(json: [UInt8]) {
        guard let reader = JSONReader(json, names: Self.names), case .number(let id) = reader.value(0),
            let objectID = reader.integer(id)
        else { return nil }
        self.init(objectID: objectID)
        func text(_ index: Int) -> String?? {
            switch reader.value(index) {
            case .absent, .null: .some(nil)
            case .string(let value): value
            default: nil
            }
        }
        func integer(_ index: Int) -> Int?? {
            switch reader.value(index) {
            case .absent, .null: .some(nil)
            case .number(let range): reader.integer(range).map { $0 }
            default: nil
            }
        }
        guard let title = text(1), let artistDisplayName = text(2), let objectDate = text(3),
            let objectBeginDate = integer(4), let objectEndDate = integer(5), let medium = text(6),
            let creditLine = text(7), let primaryImage = text(8), let primaryImageSmall = text(9),
            let objectURL = text(11)
        else { return nil }
        switch reader.value(10) {
        case .absent, .null: isPublicDomain = nil
        case .bool(let value): isPublicDomain = value
        default: return nil
        }
        (self.title, self.artistDisplayName, self.objectDate) = (title, artistDisplayName, objectDate)
        (self.objectBeginDate, self.objectEndDate, self.medium) = (objectBeginDate, objectEndDate, medium)
        (self.creditLine, self.primaryImage, self.primaryImageSmall) = (creditLine, primaryImage, primaryImageSmall)
        self.objectURL = objectURL
    }
}
