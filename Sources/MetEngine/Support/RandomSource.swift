/// Where `/random` gets its draws, injected so that tests can use a seeded generator and get the
/// same draws every run.
public protocol RandomSource: Sendable {
    /// A uniformly distributed integer in `0..<count`. Any thread.
    ///
    /// - Precondition: `count > 0`.
    func index(below count: Int) -> Int
}

/// The system's generator (`SystemRandomNumberGenerator`: the kernel's, cryptographically
/// secure), drawn without modulo bias by `Int.random(in:)`.
public struct SystemRandomSource: RandomSource {
    public init() {}

    public func index(below count: Int) -> Int {
        precondition(count > 0, "nothing to draw from")
        return Int.random(in: 0..<count)
    }
}
