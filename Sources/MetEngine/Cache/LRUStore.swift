/// A byte-bounded least-recently-used map from key to `CacheEntry`. Not thread-safe on its own:
/// `MemoryCache` keeps it behind a lock. Nodes live in an array and link by index, so reads and
/// writes allocate nothing once the array has grown. Every lookup is counted in a frequency
/// sketch, which decides whether an entry from a tier below memory may evict (`admit`).
package struct LRUStore {
    private struct Node {
        package var entry: CacheEntry
        package var newer: Int  // index of the more recently used node, or -1
        package var older: Int  // index of the less recently used node, or -1
        /// `moves` when the node was last put at the front.
        package var movedAt: Int
    }

    /// The most bytes (`CacheEntry.cost`) the store holds; adding past it evicts the oldest entries.
    package let capacity: Int
    package private(set) var bytes = 0
    package private(set) var evictions = 0
    private var nodes: [Node] = []
    private var free: [Int] = []
    private var index: [String: Int] = [:]
    private var newest = -1
    private var oldest = -1
    /// Counts every put at the front (stores and moves).
    private var moves = 0
    /// How often each key was looked up lately.
    private var sketch: FrequencySketch

    package init(capacity: Int) {
        self.capacity = capacity
        // Sized for entries of about 4 KiB, an object's record with its gzip copy.
        sketch = FrequencySketch(keys: capacity / 4_096)
    }

    package var count: Int { index.count }

    /// The entry for `key`, marking it recently used: an entry still in the newer half of the
    /// order stays where it is (eviction takes the oldest entries, so it is just as safe there),
    /// which spares most hits on a working set the relinking writes.
    package mutating func get(_ key: String) -> CacheEntry? {
        sketch.increment(key)
        guard let slot = index[key] else { return nil }
        if moves - nodes[slot].movedAt >= index.count / 2 { moveToFront(slot) }
        return nodes[slot].entry
    }

    /// The entry for `key` and when it was last used (larger is more recent), without marking it used.
    package func peek(_ key: String) -> (entry: CacheEntry, lastUse: Int)? {
        guard let slot = index[key] else { return nil }
        return (nodes[slot].entry, nodes[slot].movedAt)
    }

    /// Stores `entry`, replacing any entry with its key, then evicts least recently used entries
    /// until the store fits. An entry larger than the whole capacity is not stored (and any older
    /// entry under its key is dropped). Returns whether it was stored.
    @discardableResult
    package mutating func put(_ entry: CacheEntry) -> Bool {
        remove(entry.key)
        guard entry.cost <= capacity else { return false }
        moves += 1
        let node = Node(entry: entry, newer: -1, older: newest, movedAt: moves)
        let slot: Int
        if let reused = free.popLast() {
            nodes[reused] = node
            slot = reused
        } else {
            nodes.append(node)
            slot = nodes.count - 1
        }
        if newest >= 0 { nodes[newest].newer = slot }
        newest = slot
        if oldest < 0 { oldest = slot }
        index[entry.key] = slot
        bytes += entry.cost
        entry.setInMemory(true)
        while bytes > capacity, oldest >= 0 {
            remove(nodes[oldest].entry.key)
            evictions += 1
        }
        return true
    }

    /// Stores `entry`, which a tier below memory held, as `put` does when it replaces an entry of its
    /// key, fits without evicting, or was looked up more often lately than the least recently used
    /// entry, the first it would evict; otherwise leaves the store as it is and returns false. So a
    /// spread wider than memory does not churn through it: an entry read once from the disk does not
    /// push out one that is asked for (TinyLFU's admission).
    @discardableResult
    package mutating func admit(_ entry: CacheEntry) -> Bool {
        if index[entry.key] == nil, bytes + entry.cost > capacity, oldest >= 0,
            sketch.frequency(entry.key) <= sketch.frequency(nodes[oldest].entry.key)
        {
            return false
        }
        return put(entry)
    }

    /// Removes the entry for `key`, if any; returns whether there was one.
    @discardableResult
    package mutating func remove(_ key: String) -> Bool {
        guard let slot = index.removeValue(forKey: key) else { return false }
        unlink(slot)
        bytes -= nodes[slot].entry.cost
        nodes[slot].entry.setInMemory(false)
        // Drop the body now; the slot is reused by the next put.
        nodes[slot].entry = CacheEntry.placeholder
        free.append(slot)
        return true
    }

    private mutating func moveToFront(_ slot: Int) {
        guard slot != newest else { return }
        moves += 1
        nodes[slot].movedAt = moves
        unlink(slot)
        nodes[slot].older = newest
        nodes[slot].newer = -1
        if newest >= 0 { nodes[newest].newer = slot }
        newest = slot
        if oldest < 0 { oldest = slot }
    }

    private mutating func unlink(_ slot: Int) {
        // The links only: copying the node would retain its entry, whose count every loop touches.
        let (newer, older) = (nodes[slot].newer, nodes[slot].older)
        if newer >= 0 { nodes[newer].older = older } else { newest = older }
        if older >= 0 { nodes[older].newer = newer } else { oldest = newer }
    }
}

extension CacheEntry {
    /// An empty entry that fills freed LRU slots, so their bodies can be released.
    fileprivate static let placeholder = CacheEntry(
        key: "", kind: .object, status: 0, body: [], storedAt: 0, policy: FreshnessPolicy())
}
