import MetFixtures

@testable import MetCore
@testable import MetEngine

/// Draws from a seeded SplitMix64 generator: the same seed gives the same draws every run, so a
/// test of `/random` is repeatable. Thread-safe.
final class SeededRandom: RandomSource {
    private let generator: Locked<SplitMix64>

    init(seed: UInt64) {
        generator = Locked(SplitMix64(seed: seed))
    }

    func index(below count: Int) -> Int {
        generator.withLock { Int.random(in: 0..<count, using: &$0) }
    }
}
