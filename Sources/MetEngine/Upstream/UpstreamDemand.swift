/// Whose upstream fetch this is: the client a share of the upstream belongs to, and whether a
/// request asked for it (foreground) or it only refreshes or fills the cache (background). The pacer serves foreground fetches first and takes turns between clients
/// within each class.
public struct UpstreamClaim: Sendable, Hashable {
    /// The two classes of fetches, in the order the pacer serves them.
    public enum Priority: Int, Sendable, CaseIterable, Comparable {
        /// A request asked for it: a miss, or a page's objects, even once the request has answered
        /// without them (its client asks again for them).
        case foreground = 0
        /// Nobody waits for it: a refresh of an entry served while revalidating, a sync, a warm-up.
        case background = 1

        /// The word `/health` and `/metrics` use.
        public var name: String { self == .foreground ? "foreground" : "background" }

        public static func < (lhs: Priority, rhs: Priority) -> Bool { lhs.rawValue < rhs.rawValue }
    }

    /// Whom the share belongs to (`RequestClient.fairnessKey`); nil for the server's own work
    /// (sync, warm-up), which no client limit applies to.
    public var client: String?
    public var priority: Priority

    public init(client: String?, priority: Priority) {
        self.client = client
        self.priority = priority
    }

    /// The server's own background work.
    public static let server = UpstreamClaim(client: nil, priority: .background)

    /// The same client's claim in the background class (the refresh a hit of theirs started).
    public var inBackground: UpstreamClaim { UpstreamClaim(client: client, priority: .background) }
}

/// Who waits for one upstream fetch: the claim of the request that started it and those of the
/// requests that joined its flight since (`SingleFlight`). The pacer queues the fetch under each
/// claim, so a fetch several clients need comes in the turn of whichever of them is served first,
/// and a foreground claim lifts a background fetch into the foreground. Any thread.
public final class UpstreamDemand: Sendable {
    private struct State {
        package var claims: [UpstreamClaim]
        /// Told each claim added from now on; set while the fetch waits in the pacer.
        package var observer: (@Sendable (UpstreamClaim) -> Void)?
        /// Told once, when the fetch has its place (see `placed()`); nil after.
        package var onPlaced: (@Sendable () -> Void)?
    }

    private let state: Locked<State>

    /// - Parameters:
    ///   - claim: the first request's.
    ///   - onPlaced: told once when the fetch has a place: queued or started by the pacer, or
    ///     waiting for another instance of the group that fetches it. A request that answers
    ///     without waiting for the fetch learns so that it was not refused (`PipelineDriver`).
    public init(_ claim: UpstreamClaim, onPlaced: (@Sendable () -> Void)? = nil) {
        state = Locked(State(claims: [claim], onPlaced: onPlaced))
    }

    /// The fetch has its place (see `init`); the first call tells `onPlaced`, later ones nothing.
    package func placed() {
        let told = state.withLock { state in
            defer { state.onPlaced = nil }
            return state.onPlaced
        }
        told?()
    }

    /// The claims so far, in the order they came.
    public var claims: [UpstreamClaim] { state.withLock { $0.claims } }

    /// Adds the claim of a request that joined the fetch. A claim already there, or one no better
    /// than it (the same client, a background claim where a foreground one is), changes nothing.
    public func add(_ claim: UpstreamClaim) {
        let observer = state.withLock { state -> (@Sendable (UpstreamClaim) -> Void)? in
            let covered = state.claims.contains { $0.client == claim.client && $0.priority <= claim.priority }
            guard !covered else { return nil }
            state.claims.append(claim)
            return state.observer
        }
        observer?(claim)
    }

    /// Returns the claims so far and tells `observer` each one added from now on, until
    /// `stopObserving()` (or another `observe`) replaces it. `observer` runs on the adder's thread,
    /// outside this object's lock.
    package func observe(_ observer: @escaping @Sendable (UpstreamClaim) -> Void) -> [UpstreamClaim] {
        state.withLock { state in
            state.observer = observer
            return state.claims
        }
    }

    /// Stops telling the observer set by `observe`.
    package func stopObserving() {
        state.withLock { $0.observer = nil }
    }
}
