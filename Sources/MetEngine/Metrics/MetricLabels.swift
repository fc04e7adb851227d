/// The route a response answered, as `/metrics` labels it (`route="…"`): one of a fixed list the
/// product declares (so that no ID or URL ever becomes a label), or `none`. The engine counts by
/// `index` and names no route but `none`.
public struct MetricRoute: Hashable, Sendable {
    /// The route's slot among `ServerMetrics`'s counters: unique, small, 0 for `none`.
    public let index: Int
    /// The label value.
    public let name: String

    public init(index: Int, name: String) {
        self.index = index
        self.name = name
    }

    /// Not routed: an unknown path, or a request the HTTP layer could not read.
    public static let none = MetricRoute(index: 0, name: "none")
}

/// The cache tiers `/metrics` counts lookups and evictions of.
package enum MetricTier: Int, CaseIterable {
    case memory, disk, redis

    package var name: String {
        switch self {
        case .memory: "memory"
        case .disk: "disk"
        case .redis: "redis"
        }
    }
}

/// What a lookup in one tier found: a fresh entry (`hit`), one past freshness but served while it
/// is refreshed (`stale`), one too old to serve without the tiers below (`expired`), or none.
package enum LookupResult: Int, CaseIterable {
    case hit, stale, expired, miss

    package var name: String {
        switch self {
        case .hit: "hit"
        case .stale: "stale"
        case .expired: "expired"
        case .miss: "miss"
        }
    }

    /// The result of finding `entry` (or nothing) when serving at `time`.
    package init(_ entry: CacheEntry?, at time: Double) {
        guard let entry else {
            self = .miss
            return
        }
        switch entry.servedOutcome(at: time) {
        case .hit: self = .hit
        case .revalidating: self = .stale
        default: self = .expired
        }
    }
}
