import Synchronization

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
    /// Requests answered from a fresh entry of the persistent tier (then stored in memory).
    public var diskHits = 0
    /// Requests answered from a fresh entry of the shared tier (then stored in the local tiers).
    public var sharedHits = 0
    /// Requests that had to ask the upstream (one per single-flight leader).
    public var misses = 0
    /// Requests that waited on another request's upstream call instead of making their own
    /// (`Cache-Status: …; collapsed`, RFC 9211's term).
    public var collapsed = 0
    /// Requests answered from an expired entry while one background request refreshed it.
    public var revalidating = 0
    /// Requests answered from an expired entry because the upstream failed.
    public var staleServed = 0
    /// Entries dropped to stay within `capacity`.
    public var evictions = 0
}

/// The memory tier: a byte-bounded LRU of ready-to-send entries behind one lock, read
/// synchronously from any loop thread (a hit never leaves the loop) and written from tasks.
/// The outcome counters are atomics, so a hit takes the lock once.
public final class MemoryCache: Sendable {
    private let state: Locked<LRUStore>
    private let hits = Atomic<Int>(0)
    private let diskHits = Atomic<Int>(0)
    private let sharedHits = Atomic<Int>(0)
    private let misses = Atomic<Int>(0)
    private let collapsed = Atomic<Int>(0)
    private let revalidating = Atomic<Int>(0)
    private let staleServed = Atomic<Int>(0)

    /// - Parameter capacity: the most bytes of entries kept (see `CacheEntry.cost`).
    public init(capacity: Int) {
        state = Locked(LRUStore(capacity: capacity))
    }

    /// The entry for `key`, fresh or not, marking it recently used. Any thread.
    public func entry(for key: String) -> CacheEntry? {
        state.withLock { $0.get(key) }
    }

    /// The entries for `keys`, in order, as `entry(for:)` gives them, under one taking of the lock.
    /// Any thread.
    public func entries(for keys: [String]) -> [CacheEntry?] {
        state.withLock { store in keys.map { store.get($0) } }
    }

    /// Stores `entry`, evicting least recently used entries to stay within the bound. Any thread.
    public func store(_ entry: CacheEntry) {
        state.withLock { _ = $0.put(entry) }
    }

    /// Stores `entry`, read from a tier below memory, when it fits or is asked for more often than
    /// what it would evict (see `LRUStore.admit`); returns whether it was stored. Any thread.
    @discardableResult
    public func admit(_ entry: CacheEntry) -> Bool {
        state.withLock { $0.admit(entry) }
    }

    /// The entry for `key` and when it was last used (larger is more recent), without marking it
    /// used (the sync orders its refreshes by it). Any thread.
    package func peek(_ key: String) -> (entry: CacheEntry, lastUse: Int)? {
        state.withLock { $0.peek(key) }
    }

    /// Removes the entry for `key` (a purge); returns whether there was one. Any thread.
    public func remove(_ key: String) -> Bool {
        state.withLock { $0.remove(key) }
    }

    /// Counts one request answered by `outcome`. Any thread.
    public func count(_ outcome: CacheOutcome) {
        switch outcome {
        case .hit: hits.add(1, ordering: .relaxed)
        case .diskHit: diskHits.add(1, ordering: .relaxed)
        case .sharedHit: sharedHits.add(1, ordering: .relaxed)
        case .miss: misses.add(1, ordering: .relaxed)
        case .collapsed: collapsed.add(1, ordering: .relaxed)
        case .revalidating: revalidating.add(1, ordering: .relaxed)
        case .stale: staleServed.add(1, ordering: .relaxed)
        case .none: break
        }
    }

    /// A snapshot of the figures. Any thread.
    public var statistics: CacheStatistics {
        var figures = CacheStatistics(
            hits: hits.load(ordering: .relaxed), diskHits: diskHits.load(ordering: .relaxed),
            sharedHits: sharedHits.load(ordering: .relaxed),
            misses: misses.load(ordering: .relaxed),
            collapsed: collapsed.load(ordering: .relaxed), revalidating: revalidating.load(ordering: .relaxed),
            staleServed: staleServed.load(ordering: .relaxed))
        state.withLock { store in
            figures.entries = store.count
            figures.bytes = store.bytes
            figures.capacity = store.capacity
            figures.evictions = store.evictions
        }
        return figures
    }
}
