import Foundation

/// Wall-clock time for cache freshness, `Age`, pacing and back-off, injected so tests can move
/// it by hand instead of sleeping.
public protocol TimeSource: Sendable {
    /// Seconds since 1970-01-01T00:00:00Z, with sub-second precision.
    func now() -> Double

    /// Suspends the calling task until `now()` reaches `deadline` (seconds since 1970); returns
    /// at once if it already has. Throws `CancellationError` if the task is cancelled first.
    func sleep(until deadline: Double) async throws
}

/// The real clock (`gettimeofday`-backed `Date`) and `Task.sleep`.
public struct SystemTime: TimeSource {
    public init() {}

    public func now() -> Double {
        Date().timeIntervalSince1970
    }

    public func sleep(until deadline: Double) async throws {
        let remaining = deadline - now()
        if remaining > 0 {
            try await Task.sleep(nanoseconds: UInt64(remaining * 1_000_000_000))
        } else {
            try Task.checkCancellation()
        }
    }
}
