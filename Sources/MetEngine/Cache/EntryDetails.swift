import Foundation

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
    package static func read(_ body: [UInt8], kind: ResourceKind) -> EntryDetails {
        let decoder = JSONDecoder()
        switch kind {
        case .object:
            return (try? decoder.decode(ObjectSummary.self, from: Data(body))).map(EntryDetails.object) ?? .none
        case .objectList, .search:
            return (try? decoder.decode(IDList.self, from: Data(body))).map(EntryDetails.ids) ?? .none
        case .departments, .document, .image:
            return .none
        }
    }

    /// Bytes the details take in memory, charged to the entry's cost.
    package var cost: Int {
        switch self {
        case .none: 0
        case .object(let summary): summary.cost
        case .ids(let list): list.ids.count * MemoryLayout<Int>.stride
        case .image(let image): image.cost
        }
    }
}

/// An ID list as the Met sends it: `{"total": N, "objectIDs": [...] | null}`.
public struct IDList: Sendable, Equatable, Decodable {
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

    private enum CodingKeys: String, CodingKey {
        case total, objectIDs
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        total = try container.decode(Int.self, forKey: .total)
        let ids = try container.decodeIfPresent([Int].self, forKey: .objectIDs) ?? []
        self.ids = ids
        isUnique = Self.hasNoRepeats(ids)
    }
}

/// The members of an object record that search, sorting, the widget and deep links use. Every
/// member is optional: the Met's schema has changed over the years (docs/MET-API.md §3.2).
public struct ObjectSummary: Sendable, Equatable, Decodable {
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

    package var cost: Int {
        [title, artistDisplayName, objectDate, medium, creditLine, primaryImage, primaryImageSmall, objectURL]
            .reduce(96) { $0 + ($1?.utf8.count ?? 0) }
    }
}
