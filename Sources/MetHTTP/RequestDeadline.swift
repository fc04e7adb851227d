import EventLoops

/// The deadline of the request a connection is receiving: `--read-timeout` from its first byte
/// (or from when the connection turned to a pipelined request already buffered), however steadily
/// the rest trickles in. Loop thread only, including the last release.
struct RequestDeadline {
    private let timer: LoopTimer
    /// The loop's clock when the request under way began, while the deadline runs; nil otherwise.
    private(set) var started: Double?

    /// - Parameter passed: runs on the loop's thread when the deadline passes; it must not hold
    ///   the deadline's owner strongly.
    init(on loop: EventLoop, _ passed: @escaping () -> Void) throws(EventLoopError) {
        timer = try LoopTimer(on: loop, passed)
    }

    /// Starts the deadline at `now`, `seconds` long, unless it runs already.
    mutating func arm(now: Double, seconds: Double) {
        guard started == nil else { return }
        started = now
        timer.arm(after: seconds)
    }

    /// Stops the deadline: the request is complete, or the connection waits for its client to read.
    mutating func disarm() {
        guard started != nil else { return }
        started = nil
        timer.cancel()
    }

    /// Notes that the timer fired; the deadline no longer runs.
    mutating func expired() { started = nil }
}
