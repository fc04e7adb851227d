/// How often each key was asked for lately, approximately: a count-min sketch of small counters
/// that halve when a sample's worth of lookups has been counted, so that old popularity fades
/// (TinyLFU, Einziger, Friedman and Manes, 2017). The memory tier uses it to decide whether an
/// entry read from a tier below should displace the entry it would evict.
///
/// A key's estimate is the least of its four counters, each in a row of its own, so collisions
/// only ever overestimate. Keys are hashed with `Hasher` (seeded per process): nobody can choose
/// keys that share counters. Not thread-safe on its own: `LRUStore` keeps it behind the cache's lock.
struct FrequencySketch {
    /// Counters stop here (a key asked for 15 times in a sample is as popular as can be told).
    private static let ceiling: UInt8 = 15
    private var counters: [UInt8]
    /// `counters.count / 4 - 1`: each row's width is a power of two.
    private let rowMask: Int
    /// Lookups counted since the last halving, and how many start the next.
    private var counted = 0
    private let sampleSize: Int

    /// A sketch for about `keys` keys held at once (at least 256).
    init(keys: Int) {
        var width = 256
        while width < keys, width < 1 << 22 { width <<= 1 }
        counters = [UInt8](repeating: 0, count: 4 * width)
        rowMask = width - 1
        sampleSize = 10 * width
    }

    /// Counts one lookup of `key`.
    mutating func increment(_ key: String) {
        let hash = key.hashValue
        for row in 0..<4 {
            let slot = index(hash, row)
            if counters[slot] < Self.ceiling { counters[slot] += 1 }
        }
        counted += 1
        if counted >= sampleSize { halve() }
    }

    /// How many lookups of `key` were counted lately (an overestimate when keys collide).
    func frequency(_ key: String) -> UInt8 {
        let hash = key.hashValue
        var least = Self.ceiling
        for row in 0..<4 { least = min(least, counters[index(hash, row)]) }
        return least
    }

    /// The counter of `hash` in `row`: the row's own bits of the hash, remixed.
    private func index(_ hash: Int, _ row: Int) -> Int {
        var mixed = UInt64(bitPattern: Int64(hash)) &+ UInt64(row) &* 0x9E37_79B9_7F4A_7C15
        mixed = (mixed ^ (mixed >> 31)) &* 0xBF58_476D_1CE4_E5B9
        return row * (rowMask + 1) + Int(truncatingIfNeeded: mixed >> 32) & rowMask
    }

    private mutating func halve() {
        counted /= 2
        counters.withUnsafeMutableBufferPointer { buffer in
            for slot in buffer.indices { buffer[slot] >>= 1 }
        }
    }
}
