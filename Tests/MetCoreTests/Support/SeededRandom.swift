@testable import MetCore

/// Draws from a seeded SplitMix64 generator: the same seed gives the same draws every run, so a
/// test of `/random` is repeatable. Thread-safe.
final class SeededRandom: RandomSource {
    private struct SplitMix: RandomNumberGenerator {
        var state: UInt64

        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    private let generator: Locked<SplitMix>

    init(seed: UInt64) {
        generator = Locked(SplitMix(state: seed))
    }

    func index(below count: Int) -> Int {
        generator.withLock { Int.random(in: 0..<count, using: &$0) }
    }
}
