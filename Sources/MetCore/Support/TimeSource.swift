import Foundation

/// Wall-clock time for cache freshness and the `Age` header, injected so tests can move it by hand.
public protocol TimeSource: Sendable {
    /// Seconds since 1970-01-01T00:00:00Z, with sub-second precision.
    func now() -> Double
}

/// The real clock (`gettimeofday`-backed `Date`).
public struct SystemTime: TimeSource {
    public init() {}

    public func now() -> Double {
        Date().timeIntervalSince1970
    }
}
