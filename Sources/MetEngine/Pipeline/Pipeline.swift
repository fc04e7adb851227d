/// A route's decision procedure, written once and resumable where it needs cache entries.
///
/// The driver calls `advance` first with no resolutions, then, each time it returned `.need`, again
/// with one resolution per resource it asked for, in the same order, until it returns
/// `.respond`. The driver meets a need from fresh memory entries on the loop thread when it can,
/// and otherwise in a task through the tiers below memory; the pipeline cannot tell which, so a
/// route answered on the loop and after a miss runs the same code.
///
/// Public, as the driver and its loop are, although only this package uses them: the loop is
/// inlined into each route's module and specialized for its pipeline there, which Swift does not
/// do for `package` declarations.
public protocol Pipeline: Sendable {
    /// The next step, given the resolutions of the need returned last (empty at first), as of
    /// `now` (seconds since 1970: when the driver found them; what is presented is presented as
    /// of then). Called on a loop thread or in a task; must not block or wait.
    mutating func advance(_ resolutions: [Resolution], at now: Double) -> Step
}

/// What a pipeline does next.
public enum Step {
    /// The answer (before the layers around the handlers, such as CORS, add theirs).
    case respond(Response)
    /// The pipeline goes on once these entries are resolved.
    case need(Need)
    /// The pipeline goes on if memory still holds these very entries, fresh: one resolution per
    /// entry, the entry as a hit or `.pending`; nothing is fetched or waited for. For checking that
    /// a kept render still holds (what it was made from is what memory has) without filling what
    /// the request may no longer need. `touch`: look them up by key, under one taking of the
    /// cache's lock, which marks them recently used; else read each entry's own flag
    /// (`CacheEntry.isInMemory`), without the lock.
    case peek([CacheEntry], touch: Bool)
    /// The pipeline goes on with what memory holds fresh for these resources now: one resolution
    /// per resource, the entry as a hit or `.pending`; nothing is fetched or waited for. For
    /// drawing on what the server already knows (the ID-list pages `/random` may use) without
    /// asking the upstream for more.
    case look([MetResource])
}

/// Cache entries a pipeline asks for, and whether it waits for all of them.
public struct Need: Sendable {
    /// The resources, each resolved once, in this order.
    public var resources: [MetResource]
    /// nil: wait until each is resolved (an entry or the upstream's failure), asking the tiers one
    /// resource after another and stopping at the first failure. A duration in seconds: fetch
    /// every missing one in the background (the fetches outlive the request and fill the cache),
    /// and go on once all have arrived or this long after the need was met on the loop, with what
    /// has arrived; the rest resolve as `.pending`.
    public var wait: Double?

    public init(_ resources: [MetResource], wait: Double? = nil) {
        self.resources = resources
        self.wait = wait
    }
}

/// How one needed resource was resolved.
public enum Resolution: Sendable {
    /// An entry to use, and how the cache got it (hit, miss, collapsed, or stale because the
    /// upstream failed).
    case entry(CacheEntry, CacheOutcome)
    /// The upstream failed and no stale entry could stand in.
    case failed(UpstreamError)
    /// Not resolved: past a `wait` deadline, after an earlier failure, or too many background fetches.
    case pending
    /// The request's task was cancelled (its client left).
    case cancelled

    /// The entry, when there is one.
    package var entry: CacheEntry? {
        if case .entry(let entry, _) = self { return entry }
        return nil
    }

    /// Whether the fetch was refused because the request's client already had its share of
    /// fetches waiting (`UpstreamError.clientQueueFull`). A request with such a resolution is
    /// answered with that refusal (429), even when other parts of it could be shown: it asked for
    /// more than its share.
    package var isRefused: Bool {
        if case .failed(.clientQueueFull) = self { return true }
        return false
    }
}
