import Foundation

/// The value `start` delivers to the callback it is given, awaited. `start` runs at once, on the
/// calling task; the callback must be called exactly once, from any thread (a loop's, a worker's).
///
/// Not `withCheckedContinuation` alone, so that ThreadSanitizer sees the hand-over: when the
/// callback runs before the awaiting task has suspended, the runtime lets the task go on through
/// an atomic load in its own uninstrumented code, and a value built on the other thread (an entry
/// restored from Redis on a loop, a reply from curl's) was reported as a race. Here the callback
/// passes a lock before resuming and the task passes it after: an ordering TSan can see. A bare
/// `NSLock`, not a `Locked<Void>`: TSan took the exclusive access to a `Void` value for a write
/// to the start of its box, and an unlocked read there (the task's) for a race with it.
public func awaitDelivery<Value: Sendable>(
    _ start: (_ deliver: @escaping @Sendable (Value) -> Void) -> Void
) async -> Value {
    let fence = NSLock()
    let value = await withCheckedContinuation { (continuation: CheckedContinuation<Value, Never>) in
        start { value in
            fence.withLock {}
            continuation.resume(returning: value)
        }
    }
    fence.withLock {}
    return value
}
