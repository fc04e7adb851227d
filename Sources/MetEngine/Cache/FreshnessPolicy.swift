/// How long entries stay fresh, per kind, how long an expired entry is still served while it is
/// refreshed (stale-while-revalidate), and how long it may stand in when the upstream fails
/// (stale-if-error), both counted from the end of freshness (RFC 5861). All values in seconds.
public struct FreshnessPolicy: Sendable, Equatable {
    /// Object records: they change slowly, and `metadataDate` sync marks the changed ones expired
    /// within a day (`--sync-interval`). Default 30 days.
    public var object: Double = 2_592_000
    /// Object ID lists: they grow as records change. Default 1 h.
    public var objectList: Double = 3_600
    /// Upstream search answers (ID lists): the index changes as records do. Default 1 h.
    public var search: Double = 3_600
    /// The department list: it almost never changes. Default 7 days.
    public var departments: Double = 604_800
    /// A picture, when the image host says nothing of its lifetime (it sends `max-age=432000`,
    /// which wins: docs/MET-API.md §1). Default 5 days.
    public var image: Double = 432_000
    /// A 404 from the Met (negative caching): objects "cycle in and out", so shorter. Default 1 h.
    public var notFound: Double = 3_600
    /// After freshness ends, how long the entry may still be served if the upstream fails. Default 7 days.
    public var staleIfError: Double = 604_800
    /// After freshness ends, how long the entry is still served at once while one background
    /// request refreshes it. Default 1 day.
    public var staleWhileRevalidate: Double = 86_400

    /// How long clients may keep the server's own documents: one hour, not configurable.
    public static let documentLifetime: Double = 3_600

    public init() {}

    /// The freshness lifetime of a new entry of `kind` whose upstream status was `status`.
    public func lifetime(of kind: ResourceKind, status: Int) -> Double {
        if status == 404 { return notFound }
        switch kind {
        case .object: return object
        case .objectList: return objectList
        case .departments: return departments
        case .search: return search
        case .image: return image
        case .document: return Self.documentLifetime
        }
    }
}
