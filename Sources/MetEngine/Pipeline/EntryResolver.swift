/// The tiers below the memory tier, behind one method: what the driver calls for each entry a
/// pipeline needs and memory does not hold fresh: single flight → persistent tier → upstream
/// (`CachedFetcher`); a shared tier plugs in here too, in front of the upstream.
package protocol EntryResolver: Sendable {
    /// Resolves `resource`, whose memory entry was `cached` when the driver looked (expired, or
    /// nil when there was none), for `claim` (whose request it is, for the upstream's pacer).
    /// `onPlaced` is told once if the upstream must be asked and the fetch got its place (queued,
    /// started, joined, or left to another instance of the group), so that a caller that stops
    /// waiting knows the fetch goes on; not told when the resolution comes first. Counts the
    /// outcome (miss, collapsed, stale). In a task; waits.
    func resolve(
        _ resource: MetResource, cached: CacheEntry?, claim: UpstreamClaim, onPlaced: (@Sendable () -> Void)?
    ) async -> Resolution

    /// The resolution of `resource` at `now` by a tier below memory that answers without a task (a
    /// fresh entry of the persistent tier, read on the calling loop thread, then stored in memory
    /// and counted as a disk hit); `.askShared` when that tier read and holds nothing fresh and a
    /// shared tier may answer (`resolveShared`); `.declined` otherwise. Nothing is counted or
    /// stored unless resolved: then the driver suspends and `resolve` runs. Blocks for one row
    /// read at most.
    func resolveAtOnce(_ resource: MetResource, at now: Double) -> AtOnceResolution

    /// Asks the shared tier for `resource` without a task, on the calling loop thread: `then` is
    /// told, once and on whichever thread the reply arrives, the entry as a shared hit (fresh,
    /// stored in memory and the persistent tier, counted), or nil when the tier did not answer with
    /// a fresh entry in time (nothing counted: the driver then runs `resolve`, which asks again).
    /// Returns false, without telling `then`, when there is no shared tier to ask.
    func resolveShared(_ resource: MetResource, then: @escaping @Sendable (Resolution?) -> Void) -> Bool

    /// Starts refreshing `resource` in the background, whose memory entry `stale` is past its
    /// freshness but within stale-while-revalidate, unless a refresh of it runs already. Returns
    /// at once; any thread, loop threads included. A refresh that fails keeps `stale`. `claim` is
    /// whose request served it (the refresh waits in that client's background lane).
    func revalidate(_ resource: MetResource, stale: CacheEntry, claim: UpstreamClaim)
}

/// What the tiers below memory can do for a resource on a loop thread (`resolveAtOnce`).
package enum AtOnceResolution: Sendable {
    case resolved(Resolution)
    /// The persistent tier holds nothing fresh; the shared tier may, within one round trip.
    case askShared
    /// Only a task can resolve it.
    case declined
}
