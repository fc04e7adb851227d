/// The tiers below the memory tier, behind one method: what the driver calls for each entry a
/// pipeline needs and memory does not hold fresh: single flight → persistent tier → upstream
/// (`CachedFetcher`); a shared tier plugs in here too, in front of the upstream.
protocol EntryResolver: Sendable {
    /// Resolves `resource`, whose memory entry was `cached` when the driver looked (expired, or
    /// nil when there was none). Counts the outcome (miss, collapsed, stale). In a task; waits.
    func resolve(_ resource: MetResource, cached: CacheEntry?) async -> Resolution

    /// Starts refreshing `resource` in the background, whose memory entry `stale` is past its
    /// freshness but within stale-while-revalidate, unless a refresh of it runs already. Returns
    /// at once; any thread, loop threads included. A refresh that fails keeps `stale`.
    func revalidate(_ resource: MetResource, stale: CacheEntry)
}
