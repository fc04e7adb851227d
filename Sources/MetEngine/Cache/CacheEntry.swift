import Synchronization

/// One cached upstream answer, ready to send: the Met's status and body bytes as received (after
/// validation), a strong ETag, and its lifetimes. Immutable; replaced whole on refresh. A class,
/// so the cache, the single flight and every response share one copy and pass it with one retain.
public final class CacheEntry: Sendable {
    /// The canonical cache key (see `MetResource.cacheKey`).
    public let key: String
    /// What the entry holds.
    public let kind: ResourceKind
    /// The upstream status: 200, or 404 for a negative entry.
    public let status: Int
    /// The upstream body, byte for byte.
    public let body: [UInt8]
    /// Strong entity tag of `body`, quoted (`"…"`).
    public let etag: String
    /// `body` gzip-compressed, when it is worth it (a 200 of at least `Self.gzipThreshold` bytes
    /// that shrinks), made once when the entry is stored so a hit never compresses.
    public let gzipped: [UInt8]?
    /// Strong entity tag of the gzip representation (a different tag, as RFC 9110 requires):
    /// `etag` with `-gzip` inside the quotes. Made when asked for (once a second for a shared hit
    /// response), not kept: a kept one cost every entry 80 bytes.
    public var gzippedETag: String? { gzipped == nil ? nil : Self.gzippedETag(of: etag) }
    /// For a negative entry, the Met's 404 message, read once when stored.
    public let message: String?
    /// What was read from the body when it was stored (an object's summary, an ID list).
    public let details: EntryDetails
    /// When the entry was stored, seconds since 1970.
    public let storedAt: Double
    /// `storedAt` in whole seconds: from which `Age` counts.
    package var fetchedSecond: Int { Int(storedAt.rounded(.down)) }
    /// The `Date` its responses carry: when it was fetched from the Met; nil for the server's own
    /// documents, which are made, not fetched, and go out dated now (with `Age: 0`).
    package var fetchedDate: Int? { kind == .document ? nil : fetchedSecond }
    /// Whole seconds from its fetch to the end of its freshness: its responses' `max-age`.
    package var lifetime: Int { max(0, Int(freshUntil.rounded(.down)) - fetchedSecond) }
    /// Fresh until this time (seconds since 1970); after it, a request goes to the upstream.
    public let freshUntil: Double
    /// After freshness, served only if the upstream fails, until this time.
    public let staleUntil: Double
    /// After freshness, served at once while a background request refreshes it, until this time.
    public let revalidateUntil: Double

    /// A number no other entry of this process has (from 1 up): what is kept for this very entry
    /// elsewhere is found by it (`HitResponseTable`), which its address, reused once it is freed,
    /// could not do.
    package let serial = HitResponseTable.nextSerial()

    /// Whether the memory tier holds this very entry: set when `LRUStore` stores it, cleared when
    /// it removes it (replaced, evicted), under the cache's lock; read from any thread without it.
    private let held = Atomic<Bool>(false)

    /// Whether the memory tier holds this very entry now (see `Step.peek`).
    package var isInMemory: Bool { held.load(ordering: .acquiring) }

    /// For `LRUStore` only, under the cache's lock.
    package func setInMemory(_ value: Bool) { held.store(value, ordering: .releasing) }

    /// Bodies smaller than this are sent as they are: gzip saves little on them.
    public static let gzipThreshold = 1_024

    /// - Parameters:
    ///   - message: the Met's 404 message, for a negative entry.
    ///   - details: what was read from the body (see `EntryDetails.read`).
    ///   - compress: gzip, when responses may be compressed; called once, here, on the caller's thread.
    public convenience init(
        key: String, kind: ResourceKind, status: Int, body: [UInt8], storedAt: Double, policy: FreshnessPolicy,
        message: String? = nil, details: EntryDetails = .none, compress: (@Sendable ([UInt8]) -> [UInt8])? = nil
    ) {
        let etag = ETag.strong(for: body)
        var gzipped: [UInt8]?
        if status == 200, body.count >= Self.gzipThreshold, let compressed = compress?(body),
            compressed.count < body.count
        {
            gzipped = compressed
        }
        let freshUntil = storedAt + policy.lifetime(of: kind, status: status)
        self.init(
            key: key, kind: kind, status: status, body: body, etag: etag, gzipped: gzipped,
            message: message, details: details,
            storedAt: storedAt, freshUntil: freshUntil, staleUntil: freshUntil + policy.staleIfError,
            revalidateUntil: freshUntil + policy.staleWhileRevalidate)
    }

    /// Every member as given: for entries restored from a record (see `restored(record:key:)`).
    package init(
        key: String, kind: ResourceKind, status: Int, body: [UInt8], etag: String, gzipped: [UInt8]?,
        message: String?, details: EntryDetails, storedAt: Double, freshUntil: Double,
        staleUntil: Double, revalidateUntil: Double
    ) {
        self.key = key
        self.kind = kind
        self.status = status
        self.body = body
        self.etag = etag
        self.gzipped = gzipped
        self.message = message
        self.details = details
        self.storedAt = storedAt
        self.freshUntil = freshUntil
        self.staleUntil = staleUntil
        self.revalidateUntil = revalidateUntil
    }

    /// The same entry with its freshness ended at `time` (its stale windows kept as long as they
    /// were): what `metadataDate` sync stores for a record the Met changed.
    package func expired(at time: Double) -> CacheEntry {
        CacheEntry(
            key: key, kind: kind, status: status, body: body, etag: etag, gzipped: gzipped, message: message,
            details: details, storedAt: storedAt, freshUntil: time,
            staleUntil: time + (staleUntil - freshUntil), revalidateUntil: time + (revalidateUntil - freshUntil))
    }

    /// The entity tag of the gzip form of a body whose tag is `etag`. Cut by its UTF-8 (a tag is
    /// ASCII): cutting a `String` by `Character`s runs grapheme breaking over all of it.
    package static func gzippedETag(of etag: String) -> String {
        String(decoding: etag.utf8.dropLast(), as: UTF8.self) + gzipSuffix
    }

    /// Whether `bytes` are the UTF-8 of `gzippedETag(of: etag)`.
    package static func isGzippedETag(_ bytes: UnsafeRawBufferPointer, of etag: String) -> Bool {
        let kept = etag.utf8.count - 1
        return kept >= 0 && bytes.count == kept + gzipSuffix.utf8.count
            && UnsafeRawBufferPointer(rebasing: bytes[..<kept]).holds(etag.utf8.prefix(kept))
            && UnsafeRawBufferPointer(rebasing: bytes[kept...]).holds(gzipSuffix.utf8)
    }

    /// What `gzippedETag(of:)` puts in place of a tag's closing quote.
    private static let gzipSuffix = "-gzip\""

    /// Whether the entry can be served without asking the upstream at `time`.
    public func isFresh(at time: Double) -> Bool { time < freshUntil }

    /// Whether the entry may stand in for a failed upstream call at `time`.
    public func isUsableWhenStale(at time: Double) -> Bool { time < staleUntil }

    /// How the memory tier can answer with this entry at `time` without waiting: `.hit` while
    /// fresh, `.revalidating` after that within stale-while-revalidate (the caller then starts a
    /// refresh), nil when it must wait for the tiers below.
    package func servedOutcome(at time: Double) -> CacheOutcome? {
        if time < freshUntil { return .hit }
        return time < revalidateUntil ? .revalidating : nil
    }

    /// Bytes this entry is charged against the memory tier's bound: what it takes from the
    /// allocator, so that the bound bounds the process (measured with the memory tier full of
    /// records: within 10 % of the growth of the process's anonymous memory). The bodies, key,
    /// ETag and details (`EntryDetails.cost`), and `overhead` for the rest.
    public var cost: Int {
        body.count + (gzipped.map { $0.count + Self.heapBlock } ?? 0) + key.utf8.count + etag.utf8.count + details.cost
            + Self.overhead
    }

    /// What an entry costs beyond its contents' bytes: the object (`ObjectSummary` inline; 344
    /// bytes from malloc today, a test holds it to `objectBytes`), the memory tier's node and
    /// index slot with their arrays' growth (128), and the heap blocks' own headers of the body,
    /// key and ETag.
    package static let overhead = objectBytes + 128 + 3 * heapBlock
    /// What the entry object may take from malloc.
    package static let objectBytes = 352
    /// What a Swift array's or string's heap block takes beyond its contents: its object header
    /// (32 bytes), malloc's chunk header (8) and rounding up to 16 (8 on average).
    package static let heapBlock = 48
}
