import Synchronization

/// The counters and histograms behind `/metrics` that no other component keeps: requests by
/// route and status class, request durations by route and cache outcome, lookups by tier and
/// result, upstream requests by endpoint and outcome with their durations, and purged entries.
/// Everything else `/metrics` shows is read from the components' own figures when it is scraped.
///
/// Each count is one relaxed atomic add in a preallocated slot, made on the thread that saw the
/// event (loop threads included); nothing is formatted until a scrape. Any thread.
public final class ServerMetrics: Sendable {
    /// Upper bounds of the duration histograms' buckets, in seconds (`+Inf` follows).
    package static let bucketBounds: [Double] = [
        0.000_1, 0.000_25, 0.000_5, 0.001, 0.002_5, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10,
    ]
    /// The outcomes a request duration is labelled with (`CacheOutcome`'s cases, in this order).
    package static let outcomes: [CacheOutcome] = [
        .none, .hit, .diskHit, .sharedHit, .miss, .collapsed, .revalidating, .stale,
    ]
    /// The upstream endpoints, by the kind of what they answer.
    package static let endpoints: [ResourceKind] = [.object, .objectList, .departments, .search, .image]

    private let requests: [Counter]
    private let durations: [Histogram]
    private let lookups: [Counter]
    private let upstreamRequests: [Counter]
    private let upstreamDurations: [Histogram]
    private let purged: [Counter]

    /// How many route slots the counters have: one past the largest `MetricRoute.index` given.
    private let routeSlots: Int

    /// Counters for `routes` (the product's labels; `MetricRoute.none` always has its slot). A
    /// response labelled with a route not among them is counted as `none`.
    public init(routes: [MetricRoute] = []) {
        routeSlots = (routes.map(\.index).max() ?? 0) + 1
        requests = (0..<(routeSlots * 5)).map { _ in Counter() }
        durations = (0..<(routeSlots * Self.outcomes.count)).map { _ in Histogram() }
        lookups = (0..<(MetricTier.allCases.count * LookupResult.allCases.count)).map { _ in Counter() }
        upstreamRequests = (0..<(Self.endpoints.count * UpstreamOutcome.allCases.count)).map { _ in Counter() }
        upstreamDurations = Self.endpoints.map { _ in Histogram() }
        purged = MetricTier.allCases.map { _ in Counter() }
    }

    /// One response written: its route, status and cache outcome, `seconds` after its request
    /// was read. Called by the HTTP layer on the loop thread.
    public func observe(_ route: MetricRoute, status: Int, outcome: CacheOutcome, seconds: Double) {
        let statusClass = min(max(status / 100, 1), 5) - 1
        requests[slot(route) * 5 + statusClass].add()
        let outcomeIndex = Self.outcomes.firstIndex(of: outcome) ?? 0
        durations[slot(route) * Self.outcomes.count + outcomeIndex].observe(seconds)
    }

    /// One lookup in `tier` that found `result`.
    package func countLookup(_ tier: MetricTier, _ result: LookupResult) {
        lookups[tier.rawValue * LookupResult.allCases.count + result.rawValue].add()
    }

    /// One upstream attempt for a resource of `kind` that ended with `outcome` after `seconds`.
    package func observeUpstream(_ kind: ResourceKind, _ outcome: UpstreamOutcome, seconds: Double) {
        guard let endpoint = Self.endpoints.firstIndex(of: kind),
            let outcomeIndex = UpstreamOutcome.allCases.firstIndex(of: outcome)
        else { return }
        upstreamRequests[endpoint * UpstreamOutcome.allCases.count + outcomeIndex].add()
        upstreamDurations[endpoint].observe(seconds)
    }

    /// One entry removed from `tier` by a purge.
    package func countPurged(_ tier: MetricTier) { purged[tier.rawValue].add() }

    /// `route`'s slot: its index, or `none`'s for one the counters were not made for.
    private func slot(_ route: MetricRoute) -> Int {
        (0..<routeSlots).contains(route.index) ? route.index : MetricRoute.none.index
    }

    // MARK: Reading, for the scrape

    package func requestCount(_ route: MetricRoute, statusClass: Int) -> Int {
        requests[slot(route) * 5 + statusClass - 1].value
    }

    package func duration(_ route: MetricRoute, _ outcome: CacheOutcome) -> Histogram.Snapshot {
        durations[slot(route) * Self.outcomes.count + (Self.outcomes.firstIndex(of: outcome) ?? 0)].snapshot
    }

    package func lookupCount(_ tier: MetricTier, _ result: LookupResult) -> Int {
        lookups[tier.rawValue * LookupResult.allCases.count + result.rawValue].value
    }

    package func upstreamCount(_ endpoint: Int, _ outcome: Int) -> Int {
        upstreamRequests[endpoint * UpstreamOutcome.allCases.count + outcome].value
    }

    package func upstreamDuration(_ endpoint: Int) -> Histogram.Snapshot { upstreamDurations[endpoint].snapshot }

    package func purgedCount(_ tier: MetricTier) -> Int { purged[tier.rawValue].value }
}

/// One monotonic count. Any thread.
package final class Counter: Sendable {
    private let count = Atomic<Int>(0)

    package init() {}

    package func add(_ amount: Int = 1) { count.add(amount, ordering: .relaxed) }

    package var value: Int { count.load(ordering: .relaxed) }
}

/// A histogram of durations over `ServerMetrics.bucketBounds`: a count per bucket (not
/// cumulative: the scrape adds them up) and the sum in nanoseconds. Any thread.
package final class Histogram: Sendable {
    private let buckets: [Counter] = (0...ServerMetrics.bucketBounds.count).map { _ in Counter() }
    private let sumNanoseconds = Counter()

    package init() {}

    package func observe(_ seconds: Double) {
        let bounded = max(0, seconds)
        let index = ServerMetrics.bucketBounds.firstIndex { bounded <= $0 } ?? ServerMetrics.bucketBounds.count
        buckets[index].add()
        sumNanoseconds.add(Int(min(bounded, 1e9) * 1e9))
    }

    /// Cumulative counts per bound (`+Inf` last, which is the count), and the sum in seconds.
    package struct Snapshot {
        package var cumulative: [Int]
        package var sum: Double
        package var count: Int { cumulative.last ?? 0 }
    }

    package var snapshot: Snapshot {
        var running = 0
        let cumulative = buckets.map { counter -> Int in
            running += counter.value
            return running
        }
        return Snapshot(cumulative: cumulative, sum: Double(sumNanoseconds.value) / 1e9)
    }
}
