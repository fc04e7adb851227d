/// When a failed upstream attempt is tried again, and after how long.
///
/// Only failures that another attempt might cure are retried: a 5xx, no answer at all, or an
/// attempt that timed out. A 4xx, the firewall's block page, a malformed body and a cancellation
/// are final: asking again would change nothing, or (for a block) make it worse (docs/MET-API.md §6).
///
/// The pause before retry `n` is drawn uniformly from `0...min(maxDelay, baseDelay × 2^(n-1))`
/// ("full jitter"), so clients that failed together do not come back together. Every retry still
/// goes through the pacer, so even a zero pause never hurries the upstream.
public struct RetryPolicy: Sendable {
    /// The default `baseDelay`, in seconds: the ceiling of the first pause.
    public static let defaultBaseDelay = 1.0
    /// The default `maxDelay`, in seconds: no pause is longer.
    public static let defaultMaxDelay = 8.0

    /// Attempts in all, the first included; 1 means no retries.
    public var maxAttempts: Int
    /// The ceiling of the first pause, in seconds; it doubles with each further retry.
    public var baseDelay: Double
    /// The largest ceiling, in seconds.
    public var maxDelay: Double
    /// A number from 0 to 1 for the jitter; injectable so tests are deterministic. Default: the
    /// system's random number generator.
    public var random: @Sendable () -> Double

    /// - Parameters:
    ///   - maxAttempts: attempts in all, at least 1.
    ///   - baseDelay: seconds; the first pause's ceiling.
    ///   - maxDelay: seconds; the largest ceiling.
    ///   - random: returns a number from 0 to 1 on each call.
    public init(
        maxAttempts: Int, baseDelay: Double = defaultBaseDelay, maxDelay: Double = defaultMaxDelay,
        random: @escaping @Sendable () -> Double = { Double.random(in: 0...1) }
    ) {
        precondition(maxAttempts >= 1, "a retry policy needs at least one attempt")
        self.maxAttempts = maxAttempts
        self.baseDelay = baseDelay
        self.maxDelay = maxDelay
        self.random = random
    }

    /// Whether an attempt that failed with `error` may be tried again.
    public static func isRetryable(_ error: UpstreamError) -> Bool {
        switch error {
        case .status(let code): (500...599).contains(code)
        case .unreachable, .timeout: true
        case .blocked, .malformed, .cancelled, .clientQueueFull: false
        }
    }

    /// The longest pause before retry `retry` (1 for the first), in seconds.
    public func ceiling(beforeRetry retry: Int) -> Double {
        let doublings = max(0, min(retry - 1, 30))  // 2^30 × any sane base is past any sane cap
        return min(maxDelay, baseDelay * Double(1 << doublings))
    }

    /// A pause before retry `retry` (1 for the first), in seconds: jittered below its ceiling.
    public func delay(beforeRetry retry: Int) -> Double {
        ceiling(beforeRetry: retry) * min(1, max(0, random()))
    }
}
