/// SplitMix64: a small, fast, deterministic generator; the same seed gives the same numbers, so
/// the fake Met's failures, the tests' draws and request IDs' spread repeat from run to run.
/// Never for secrets.
public struct SplitMix64: RandomNumberGenerator, Sendable {
    /// The state, advanced by each `next()`.
    public var seed: UInt64

    public init(seed: UInt64) {
        self.seed = seed
    }

    public mutating func next() -> UInt64 {
        seed &+= 0x9E37_79B9_7F4A_7C15
        var z = seed
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
