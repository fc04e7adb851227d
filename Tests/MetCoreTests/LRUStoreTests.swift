import Glibc
import Testing

@testable import MetCore
@testable import MetEngine

@Suite("LRU store and memory cache")
struct LRUStoreTests {
    /// An entry whose `cost` is exactly `cost` bytes: a short key and ETag (inline strings), no
    /// gzip copy, and a body of the rest.
    private func entry(_ key: String, cost: Int, status: Int = 200) -> CacheEntry {
        let body = Array(repeating: UInt8(ascii: "x"), count: cost - key.utf8.count - 3 - CacheEntry.overhead)
        return CacheEntry(
            key: key, kind: .object, status: status, body: body, etag: "\"e\"", gzipped: nil, message: nil,
            details: .none, storedAt: 0, freshUntil: 1_000, staleUntil: 1_000, revalidateUntil: 1_000)
    }

    @Test func entryCostIsBodyKeyETagAndOverhead() {
        let entry = CacheEntry(
            key: "abc", kind: .object, status: 200, body: [1, 2], storedAt: 0, policy: FreshnessPolicy())
        #expect(entry.cost == 2 + 3 + entry.etag.utf8.count + CacheEntry.overhead)
        #expect(self.entry("k", cost: 5_000).cost == 5_000)
    }

    /// A record's summary is charged its strings' heap blocks, and the gzip copy its own header.
    @Test func aRecordsEntryIsChargedItsSummaryStringsAndGzipCopy() {
        // Long enough to be compressed (`CacheEntry.gzipThreshold`).
        let body = Array(Sample.object(1).utf8) + Array(repeating: UInt8(ascii: " "), count: CacheEntry.gzipThreshold)
        let details = EntryDetails.read(body, kind: .object)
        guard case .object(let summary) = details else {
            Issue.record("no summary")
            return
        }
        let long = [summary.title, summary.artistDisplayName, summary.objectURL].compactMap { $0 }.filter {
            $0.utf8.count > 15
        }
        #expect(!long.isEmpty)
        #expect(details.cost >= long.reduce(0) { $0 + $1.utf8.count + CacheEntry.heapBlock })
        let entry = CacheEntry(
            key: Sample.objectKey(1), kind: .object, status: 200, body: body, storedAt: 0, policy: FreshnessPolicy(),
            details: details, compress: { _ in [1, 2, 3] })
        #expect(
            entry.cost
                == body.count + 3 + CacheEntry.heapBlock + entry.key.utf8.count + entry.etag.utf8.count + details.cost
                + CacheEntry.overhead)
    }

    /// The entry object takes from malloc no more than it is charged (`CacheEntry.objectBytes`),
    /// and not much less: a stored property added to it must raise the charge with it.
    @Test func anEntryObjectTakesWhatItIsCharged() {
        let body = Array(Sample.object(1).utf8)
        let entry = CacheEntry(
            key: Sample.objectKey(1), kind: .object, status: 200, body: body, storedAt: 0, policy: FreshnessPolicy(),
            details: EntryDetails.read(body, kind: .object))
        typealias UsableSize = @convention(c) (UnsafeMutableRawPointer?) -> Int
        let usableSize = unsafeBitCast(dlsym(nil, "malloc_usable_size"), to: UsableSize.self)
        // The chunk: what it may use, and malloc's own header.
        let taken = usableSize(Unmanaged.passUnretained(entry).toOpaque()) + 8
        #expect(taken <= CacheEntry.objectBytes)
        #expect(taken > CacheEntry.objectBytes - 48)
    }

    @Test func storesUpToTheByteBound() {
        var store = LRUStore(capacity: 10_000)
        let storedA = store.put(entry("a", cost: 4_000))
        let storedB = store.put(entry("b", cost: 6_000))
        #expect(storedA && storedB)
        #expect(store.bytes == 10_000)
        #expect(store.count == 2)
        #expect(store.evictions == 0)
    }

    /// An entry knows whether memory holds it: from its store until it is replaced or evicted,
    /// and never when it was too large to store.
    @Test func anEntryKnowsWhetherMemoryHoldsIt() {
        var store = LRUStore(capacity: 10_000)
        let first = entry("a", cost: 4_000)
        #expect(!first.isInMemory)
        store.put(first)
        #expect(first.isInMemory)
        let replacement = entry("a", cost: 4_000)
        store.put(replacement)
        #expect(!first.isInMemory && replacement.isInMemory)
        let other = entry("b", cost: 7_000)
        store.put(other)  // evicts a
        #expect(!replacement.isInMemory && other.isInMemory)
        let huge = entry("c", cost: 20_000)
        store.put(huge)
        #expect(!huge.isInMemory)
    }

    @Test func evictsTheLeastRecentlyUsedFirst() {
        var store = LRUStore(capacity: 10_000)
        store.put(entry("a", cost: 3_000))
        store.put(entry("b", cost: 3_000))
        store.put(entry("c", cost: 3_000))
        _ = store.get("a")  // a is now the most recent; b is the oldest
        store.put(entry("d", cost: 3_000))
        #expect(store.get("b") == nil)
        #expect(store.get("a") != nil)
        #expect(store.get("c") != nil)
        #expect(store.get("d") != nil)
        #expect(store.evictions == 1)
        #expect(store.bytes == 9_000)
    }

    @Test func aHitInTheNewerHalfKeepsItsPlaceAndAnOlderOneMovesToTheFront() {
        var store = LRUStore(capacity: 10_000)
        for key in ["a", "b", "c", "d"] { store.put(entry(key, cost: 2_500)) }
        _ = store.get("d")  // newest already: no move
        _ = store.get("c")  // in the newer half: stays behind d
        _ = store.get("a")  // the oldest: moves to the front
        // Age order is now b (oldest), c, d, a: two new entries evict b, then c (not d, as a
        // strict LRU would after the hit on c).
        store.put(entry("e", cost: 2_500))
        store.put(entry("f", cost: 2_500))
        #expect(store.evictions == 2)
        #expect(store.get("b") == nil)
        #expect(store.get("c") == nil)
        #expect(store.get("d") != nil)
        #expect(store.get("a") != nil)
    }

    @Test func evictsAsManyAsNeededInAgeOrder() {
        var store = LRUStore(capacity: 10_000)
        for key in ["a", "b", "c", "d"] { store.put(entry(key, cost: 2_500)) }
        _ = store.get("a")
        store.put(entry("e", cost: 7_000))  // needs 4,500 more bytes: b, c, then d go
        #expect(store.count == 2)
        #expect(store.get("a") != nil)
        #expect(store.get("e") != nil)
        #expect(store.evictions == 3)
        #expect(store.bytes == 9_500)
    }

    @Test func anEntryLargerThanTheCapacityIsNotStored() {
        var store = LRUStore(capacity: 10_000)
        store.put(entry("a", cost: 4_000))
        let stored = store.put(entry("huge", cost: 10_010))
        #expect(!stored)
        #expect(store.get("huge") == nil)
        #expect(store.get("a") != nil)
        #expect(store.bytes == 4_000)
        #expect(store.evictions == 0)
    }

    @Test func anOversizedReplacementDropsTheOldEntry() {
        var store = LRUStore(capacity: 10_000)
        store.put(entry("a", cost: 4_000))
        let stored = store.put(entry("a", cost: 20_000))
        #expect(!stored)
        #expect(store.get("a") == nil)
        #expect(store.bytes == 0)
    }

    @Test func replacingAnEntryAdjustsTheBytes() {
        var store = LRUStore(capacity: 10_000)
        store.put(entry("a", cost: 4_000))
        store.put(entry("b", cost: 3_000))
        store.put(entry("a", cost: 2_000))
        #expect(store.count == 2)
        #expect(store.bytes == 5_000)
        #expect(store.get("a")?.cost == 2_000)
        store.put(entry("a", cost: 7_000))
        #expect(store.bytes == 10_000)
        #expect(store.evictions == 0)
    }

    @Test func replacingAnEntryMakesItTheMostRecent() {
        var store = LRUStore(capacity: 10_000)
        store.put(entry("a", cost: 4_000))
        store.put(entry("b", cost: 4_000))
        store.put(entry("a", cost: 4_000))  // b is now the oldest
        store.put(entry("c", cost: 4_000))
        #expect(store.get("b") == nil)
        #expect(store.get("a") != nil)
    }

    @Test func freedSlotsAreReusedAndRemovalIsExact() {
        var store = LRUStore(capacity: 100_000)
        for round in 0..<50 {
            store.put(entry("k\(round % 5)", cost: 3_000 + round))
            if round % 3 == 0 { store.remove("k\((round + 1) % 5)") }
        }
        let held = (0..<5).compactMap { store.get("k\($0)") }
        #expect(store.count == held.count)
        #expect(store.bytes == held.reduce(0) { $0 + $1.cost })
        store.remove("missing")
        for key in 0..<5 { store.remove("k\(key)") }
        #expect(store.count == 0)
        #expect(store.bytes == 0)
        store.put(entry("again", cost: 5_000))
        #expect(store.get("again")?.cost == 5_000)
    }

    @Test func memoryCacheReportsItsFigures() {
        let cache = MemoryCache(capacity: 10_000)
        cache.store(entry("a", cost: 6_000))
        cache.store(entry("b", cost: 6_000))
        cache.store(entry("huge", cost: 50_000))
        for outcome in [CacheOutcome.hit, .hit, .miss, .collapsed, .stale, .none] { cache.count(outcome) }
        let figures = cache.statistics
        #expect(figures.entries == 1)
        #expect(figures.bytes == 6_000)
        #expect(figures.capacity == 10_000)
        #expect(figures.evictions == 1)
        #expect(figures.hits == 2)
        #expect(figures.misses == 1)
        #expect(figures.collapsed == 1)
        #expect(figures.staleServed == 1)
        #expect(cache.entry(for: "a") == nil)
        #expect(cache.entry(for: "b")?.key == "b")
    }

    @Test func theServiceNeverHoldsMoreThanItsCapacity() async {
        let upstream = FakeUpstream()
        for id in 1...40 { upstream.answer(.object(id: id), with: .json(Sample.object(id))) }
        let harness = Harness(upstream: upstream) { $0.cache.memorySize = 4_000 }
        for id in 1...40 { _ = await harness.get("/objects/\(id)") }
        let figures = harness.service.engine.cache.statistics
        #expect(figures.bytes <= 4_000)
        #expect(figures.entries + figures.evictions == 40)
        #expect(figures.entries > 0)
        // The newest entry is still there; the first was evicted and is fetched again.
        _ = await harness.get("/objects/40")
        _ = await harness.get("/objects/1")
        #expect(upstream.callCount(for: .object(id: 40)) == 1)
        #expect(upstream.callCount(for: .object(id: 1)) == 2)
    }

    /// An entry from a tier below memory (`admit`) evicts only an entry asked for less often.
    @Test func anEntryFromBelowDisplacesOnlyAnEntryAskedForLessOften() {
        var store = LRUStore(capacity: 10_000)
        let (roomForA, roomForB) = (store.admit(entry("a", cost: 4_000)), store.admit(entry("b", cost: 4_000)))
        #expect(roomForA && roomForB)  // room enough: stored
        for _ in 0..<3 { _ = store.get("a") }
        _ = store.get("b")
        // "c" was asked for once (its miss), "a", the least recently used, three times …
        _ = store.get("c")
        let refused = !store.admit(entry("c", cost: 4_000))
        #expect(refused)
        #expect(store.count == 2 && store.evictions == 0)
        let (a, b) = (store.get("a"), store.get("b"))
        #expect(a != nil && b != nil)
        // … and once asked for more often than it, it takes its place.
        for _ in 0..<6 { _ = store.get("c") }
        let admitted = store.admit(entry("c", cost: 4_000))
        #expect(admitted)
        #expect(store.evictions == 1)
        #expect(store.peek("c") != nil && store.peek("a") == nil)
        // A newer copy of an entry held is always taken, and `put` (a fetch) never asks.
        let (replaced, fetched) = (store.admit(entry("c", cost: 4_000)), store.put(entry("d", cost: 4_000)))
        #expect(replaced && fetched)
        #expect(store.count == 2)
    }

    @Test func theSketchCountsLookupsUpToItsCeilingAndHalvesThemAfterASample() {
        var sketch = FrequencySketch(keys: 256)  // rows of 256 counters; a sample of 2,560 lookups
        #expect(sketch.frequency("a") == 0)
        for _ in 0..<3 { sketch.increment("a") }
        #expect(sketch.frequency("a") == 3)
        for _ in 0..<30 { sketch.increment("b") }
        #expect(sketch.frequency("b") == 15)
        // 2,527 more lookups of another key end the sample: every counter halves.
        for _ in 0..<2_527 { sketch.increment("other") }
        #expect(sketch.frequency("a") == 1)
        #expect(sketch.frequency("b") == 7)
        #expect(sketch.frequency("other") == 7)
    }

    @Test func anAnswerTooLargeToKeepIsServedButNotStored() async {
        let upstream = FakeUpstream([Sample.objectKey(1): .json(Sample.object(1))])
        let harness = Harness(upstream: upstream) { $0.cache.memorySize = 200 }
        let first = await harness.get("/objects/1")
        #expect(first.status == 200)
        #expect(first.body == Array(Sample.object(1).utf8))
        #expect(harness.service.engine.cache.statistics.entries == 0)
        #expect(harness.getImmediately("/objects/1") == nil)
        _ = await harness.get("/objects/1")
        #expect(upstream.calls.count == 2)
    }
}
