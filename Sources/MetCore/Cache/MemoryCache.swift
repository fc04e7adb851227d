/// Figures about the cache, for `/health`.
public struct CacheStatistics: Sendable, Equatable {
    /// Entries held.
    public var entries = 0
    /// Bytes charged for them (`CacheEntry.cost`).
    public var bytes = 0
    /// The bound on `bytes`.
    public var capacity = 0
    /// Requests answered from a fresh entry.
    public var hits = 0
    /// Requests that had to ask the upstream (one per single-flight leader).
    public var misses = 0
    /// Requests that waited on another request's upstream call instead of making their own.
    public var coalesced = 0
    /// Requests answered from an expired entry because the upstream failed.
    public var staleServed = 0
    /// Entries dropped to stay within `capacity`.
    public var evictions = 0
}

/// The memory tier: a byte-bounded LRU of ready-to-send entries behind one lock, read
/// synchronously from any loop thread (a hit never leaves the loop) and written from tasks.
public final class MemoryCache: Sendable {
    private struct State {
        var store: LRUStore
        var statistics = CacheStatistics()
    }

    private let state: Locked<State>

    /// - Parameter capacity: the most bytes of entries kept (see `CacheEntry.cost`).
    public init(capacity: Int) {
        state = Locked(State(store: LRUStore(capacity: capacity)))
    }

    /// The entry for `key`, fresh or not, marking it recently used. Any thread.
    public func entry(for key: String) -> CacheEntry? {
        state.withLock { $0.store.get(key) }
    }

    /// Stores `entry`, evicting least recently used entries to stay within the bound. Any thread.
    public func store(_ entry: CacheEntry) {
        state.withLock { _ = $0.store.put(entry) }
    }

    /// Counts one request answered by `outcome` (hit, miss, collapsed or stale). Any thread.
    public func count(_ outcome: CacheOutcome) {
        state.withLock { state in
            switch outcome {
            case .hit: state.statistics.hits += 1
            case .miss: state.statistics.misses += 1
            case .collapsed: state.statistics.coalesced += 1
            case .stale: state.statistics.staleServed += 1
            case .none: break
            }
        }
    }

    /// A snapshot of the figures. Any thread.
    public var statistics: CacheStatistics {
        state.withLock { state in
            var figures = state.statistics
            figures.entries = state.store.count
            figures.bytes = state.store.bytes
            figures.capacity = state.store.capacity
            figures.evictions = state.store.evictions
            return figures
        }
    }
}
