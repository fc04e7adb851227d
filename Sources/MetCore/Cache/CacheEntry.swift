/// One cached upstream answer, ready to send: the Met's status and body bytes as received (after
/// validation), a strong ETag, and its lifetimes. Immutable; replaced whole on refresh.
public struct CacheEntry: Sendable {
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
    /// When the entry was stored, seconds since 1970.
    public let storedAt: Double
    /// Fresh until this time (seconds since 1970); after it, a request goes to the upstream.
    public let freshUntil: Double
    /// After freshness, served only if the upstream fails, until this time.
    public let staleUntil: Double

    public init(key: String, kind: ResourceKind, status: Int, body: [UInt8], storedAt: Double, policy: FreshnessPolicy) {
        self.key = key
        self.kind = kind
        self.status = status
        self.body = body
        self.etag = ETag.strong(for: body)
        self.storedAt = storedAt
        self.freshUntil = storedAt + policy.lifetime(of: kind, status: status)
        self.staleUntil = freshUntil + policy.staleIfError
    }

    /// Whether the entry can be served without asking the upstream at `time`.
    public func isFresh(at time: Double) -> Bool { time < freshUntil }

    /// Whether the entry may stand in for a failed upstream call at `time`.
    public func isUsableWhenStale(at time: Double) -> Bool { time < staleUntil }

    /// Bytes this entry is charged against the memory tier's bound: body, key and a fixed
    /// overhead for the struct, ETag and LRU bookkeeping.
    public var cost: Int { body.count + key.utf8.count + 160 }
}
