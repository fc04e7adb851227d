import CLibevent

/// A timer on an `EventLoop` that is armed and re-armed without allocating: a call's timeout, a
/// reconnect's back-off, curl's wake-up. It holds its loop, so the base outlives it.
///
/// Loop thread only, including the last release (its event is freed then).
public final class LoopTimer {
    private let loop: EventLoop
    private var event: OpaquePointer?
    private let fire: () -> Void

    /// - Parameters:
    ///   - repeating: fires every `arm(after:)` interval until `cancel()`, instead of once.
    ///   - fire: runs on the loop's thread. It must not hold the timer's owner strongly when the
    ///     owner holds the timer.
    public init(on loop: EventLoop, repeating: Bool = false, _ fire: @escaping () -> Void) throws(EventLoopError) {
        self.loop = loop
        self.fire = fire
        event = event_new(
            loop.base, -1, repeating ? Int16(EV_PERSIST) : 0,
            { _, _, context in Unmanaged<LoopTimer>.fromOpaque(context!).takeUnretainedValue().fire() },
            Unmanaged.passUnretained(self).toOpaque())
        guard event != nil else { throw EventLoopError("event_new") }
    }

    deinit {
        if let event { event_free(event) }
    }

    /// Fires in `seconds` (every `seconds`, if repeating), replacing any earlier arming.
    public func arm(after seconds: Double) {
        var delay = EventLoop.interval(seconds: max(0, seconds))
        event_add(event, &delay)
    }

    /// Whether it is armed and has not fired yet.
    public var isArmed: Bool {
        event_pending(event, Int16(EV_TIMEOUT), nil) != 0
    }

    /// Disarms it; idempotent.
    public func cancel() {
        event_del(event)
    }
}
