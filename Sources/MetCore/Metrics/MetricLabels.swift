/// The route a response answered, as `/metrics` labels it (`route="…"`): a fixed set, so that no
/// ID or URL ever becomes a label.
public enum MetricRoute: Int, Sendable, CaseIterable {
    case object, objects, departments, search, widget, open, random, iiif, explorer, mirror, purge, health, openapi
    case metrics
    /// Not routed: an unknown path, or a request the HTTP layer could not read.
    case none

    /// The label value.
    var name: String {
        switch self {
        case .object: "object"
        case .objects: "objects"
        case .departments: "departments"
        case .search: "search"
        case .widget: "widget"
        case .open: "open"
        case .random: "random"
        case .iiif: "iiif"
        case .explorer: "explorer"
        case .mirror: "mirror"
        case .purge: "purge"
        case .health: "health"
        case .openapi: "openapi"
        case .metrics: "metrics"
        case .none: "none"
        }
    }
}

/// The cache tiers `/metrics` counts lookups and evictions of.
enum MetricTier: Int, CaseIterable {
    case memory, disk, redis

    var name: String {
        switch self {
        case .memory: "memory"
        case .disk: "disk"
        case .redis: "redis"
        }
    }
}

/// What a lookup in one tier found: a fresh entry (`hit`), one past freshness but served while it
/// is refreshed (`stale`), one too old to serve without the tiers below (`expired`), or none.
enum LookupResult: Int, CaseIterable {
    case hit, stale, expired, miss

    var name: String {
        switch self {
        case .hit: "hit"
        case .stale: "stale"
        case .expired: "expired"
        case .miss: "miss"
        }
    }

    /// The result of finding `entry` (or nothing) when serving at `time`.
    init(_ entry: CacheEntry?, at time: Double) {
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
