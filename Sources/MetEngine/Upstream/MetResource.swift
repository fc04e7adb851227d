/// A Met resource the server caches: where it lives upstream and under which canonical key.
/// Two requests that mean the same thing produce equal resources, so they share one entry.
public enum MetResource: Sendable, Hashable {
    /// `GET /public/collection/v1/objects/{id}`.
    case object(id: Int)
    /// `GET /public/collection/v1/objects`, filtered. `departmentIds` is sorted and unique;
    /// `metadataDate` is `YYYY-MM-DD`.
    case objectList(departmentIds: [Int], metadataDate: String?)
    /// `GET /public/collection/v1/departments`.
    case departments
    /// A search on one generation of the API, with its query already canonical (see
    /// `search(_:filters:q:page:)`).
    case search(SearchAPI, query: [RequestTarget.QueryItem])

    /// A search resource with its query in canonical order: every parameter but `q` sorted by
    /// name (v1.1's `offset` and `limit` among them), then `q` (if any) last, as the Met's own examples do
    /// (its v1 results depend on parameter order; docs/MET-API.md §5).
    public static func search(
        _ api: SearchAPI, filters: [RequestTarget.QueryItem], q: String?, page: (offset: Int, limit: Int)? = nil
    ) -> MetResource {
        var items = filters
        if let page {
            items.append(.init(name: "offset", value: String(page.offset)))
            items.append(.init(name: "limit", value: String(page.limit)))
        }
        items.sort { ($0.name, $0.value) < ($1.name, $1.value) }
        if let q { items.append(.init(name: "q", value: q)) }
        return .search(api, query: items)
    }

    /// The Met's base path for everything but v1.1 search.
    public static let basePath = "/public/collection/v1"

    /// What kind of entry it makes.
    public var kind: ResourceKind {
        switch self {
        case .object: .object
        case .objectList: .objectList
        case .departments: .departments
        case .search: .search
        }
    }

    /// The upstream path.
    public var path: String {
        switch self {
        case .object(let id): "\(Self.basePath)/objects/\(id)"
        case .objectList: "\(Self.basePath)/objects"
        case .departments: "\(Self.basePath)/departments"
        case .search(let api, _): api.path
        }
    }

    /// The upstream query, in canonical order (names sorted).
    public var query: [RequestTarget.QueryItem] {
        if case .search(_, let query) = self { return query }
        guard case .objectList(let departmentIds, let metadataDate) = self else { return [] }
        var items: [RequestTarget.QueryItem] = []
        if !departmentIds.isEmpty {
            items.append(.init(name: "departmentIds", value: departmentIds.map(String.init).joined(separator: "|")))
        }
        if let metadataDate { items.append(.init(name: "metadataDate", value: metadataDate)) }
        return items
    }

    /// The canonical cache key: exactly the target sent upstream (`UpstreamTarget`), so two
    /// resources share an entry only when the Met is asked the same bytes. An object's key is
    /// written directly: its path is digits and `/` only, which the encoder keeps as they are, and
    /// it is made for every object of every search page hit.
    public var cacheKey: String {
        if case .object(let id) = self { return Self.objectKeyPrefix + String(id) }
        return UpstreamTarget.encode(path: path, query: query)
    }

    /// Whether `key` is `object(id: id)`'s `cacheKey`, compared where it lies: a disk or Redis hit
    /// checks every object record's key, and spelling the key to compare made a string each time.
    public static func isObjectKey(_ key: String, id: Int) -> Bool {
        let prefix = objectKeyPrefix.utf8.count
        // `String(id)` is a small string: its bytes are kept inline, nothing is allocated.
        return key.utf8.withContiguousStorageIfAvailable { utf8 in
            utf8.count > prefix
                && UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: utf8[..<prefix])).holds(objectKeyPrefix.utf8)
                && UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: utf8[prefix...])).holds(String(id).utf8)
        } ?? (key == MetResource.object(id: id).cacheKey)
    }

    /// The object ID whose `cacheKey` `key` is exactly (no leading zero or sign, nothing after the
    /// digits), or nil for any other key: a 404 entry's object, which has no record to name it.
    public static func objectID(inKey key: String) -> Int? {
        guard key.utf8.starts(with: objectKeyPrefix.utf8) else { return nil }
        let digits = key.utf8.dropFirst(objectKeyPrefix.utf8.count)
        guard let id = Int(Substring(digits)), id > 0, isObjectKey(key, id: id) else { return nil }
        return id
    }

    private static let objectKeyPrefix = "\(basePath)/objects/"
}
