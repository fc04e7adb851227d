/// A resource whose answers the tiers keep as `CacheEntry`s: the API's records (`MetResource`) and
/// the image host's pictures (`ImageResource`). `CachedFetcher` resolves either through its tiers.
public protocol CachedResource: UpstreamRequest {
    /// This resource as asked of the upstream while `standIn`, an expired entry, is held: with the
    /// upstream's validators that entry keeps, so that an unchanged answer costs a 304; itself when
    /// there are none.
    func revalidating(_ standIn: CacheEntry?) -> Self

    /// The entry `answer` makes, stored at `storedAt` under `key`: a new entry, or for a 304
    /// `standIn` with its lifetimes renewed; nil when the answer needs a stand-in there is not.
    ///
    /// - Parameter compress: gzip, for a copy of a body worth compressing.
    func entry(
        from answer: Answer, key: String, standIn: CacheEntry?, storedAt: Double, policy: FreshnessPolicy,
        compress: (@Sendable ([UInt8]) -> [UInt8])?
    ) -> CacheEntry?
}

extension MetResource: CachedResource {
    /// The API sends no validators (docs/MET-API.md §1): every fetch is unconditional.
    public func revalidating(_ standIn: CacheEntry?) -> MetResource { self }

    public func entry(
        from answer: CacheableAnswer, key: String, standIn: CacheEntry?, storedAt: Double, policy: FreshnessPolicy,
        compress: (@Sendable ([UInt8]) -> [UInt8])?
    ) -> CacheEntry? {
        // The upstream's gzip copy when it sent one: the same bytes compressed, without the cost.
        let copy = answer.gzipped.map { gzipped in { @Sendable (_: [UInt8]) in gzipped } } ?? compress
        return CacheEntry(
            key: key, kind: kind, status: answer.status, body: answer.body, storedAt: storedAt, policy: policy,
            message: answer.message, details: answer.details, compress: compress == nil ? nil : copy)
    }
}

extension ImageResource: CachedResource {
    public func revalidating(_ standIn: CacheEntry?) -> ImageResource {
        guard let standIn, standIn.status == 200, case .image(let details) = standIn.details,
            !details.upstream.isEmpty
        else { return self }
        var resource = self
        resource.conditions = details.upstream
        return resource
    }

    /// Pictures are never gzipped (their formats are compressed already); their lifetime is the
    /// image host's `max-age` when it sent one, else the policy's.
    public func entry(
        from answer: Answer, key: String, standIn: CacheEntry?, storedAt: Double, policy: FreshnessPolicy,
        compress: (@Sendable ([UInt8]) -> [UInt8])?
    ) -> CacheEntry? {
        switch answer {
        case .image(let bytes, let details, let maxAge):
            return Self.entry(
                key: key, status: 200, body: bytes, details: .image(details), storedAt: storedAt,
                lifetime: maxAge ?? policy.image, policy: policy)
        case .notModified(let validators, let maxAge):
            guard let standIn, case .image(var details) = standIn.details else { return nil }
            details.upstream = validators
            return Self.entry(
                key: key, status: 200, body: standIn.body, details: .image(details), storedAt: storedAt,
                lifetime: maxAge ?? policy.image, policy: policy)
        case .notFound:
            return Self.entry(
                key: key, status: 404, body: [], details: .none, storedAt: storedAt, lifetime: policy.notFound,
                policy: policy)
        }
    }

    private static func entry(
        key: String, status: Int, body: [UInt8], details: EntryDetails, storedAt: Double, lifetime: Double,
        policy: FreshnessPolicy
    ) -> CacheEntry {
        let freshUntil = storedAt + lifetime
        return CacheEntry(
            key: key, kind: .image, status: status, body: body, etag: ETag.strong(for: body), gzipped: nil,
            message: nil, details: details, storedAt: storedAt, freshUntil: freshUntil,
            staleUntil: freshUntil + policy.staleIfError, revalidateUntil: freshUntil + policy.staleWhileRevalidate)
    }
}
