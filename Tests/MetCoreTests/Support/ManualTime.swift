@testable import MetCore

/// A clock that moves only when a test moves it: freshness, `Age` and block cool-downs are
/// tested by advancing it, never by sleeping.
final class ManualTime: TimeSource {
    private let seconds: Locked<Double>

    /// - Parameter start: seconds since 1970; the default is an arbitrary fixed instant (2025-06-15).
    init(_ start: Double = 1_750_000_000) {
        seconds = Locked(start)
    }

    func now() -> Double {
        seconds.withLock { $0 }
    }

    /// Moves the clock forward by `interval` seconds.
    func advance(by interval: Double) {
        seconds.withLock { $0 += interval }
    }
}
