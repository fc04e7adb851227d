import Foundation

/// A value behind an `NSLock`: the one way mutable state is shared between libevent loop threads
/// and Swift concurrency. `NSLock` (a pthread mutex) keeps ThreadSanitizer able to see the
/// synchronisation, which it cannot for a raw futex.
///
/// Keep the closures passed to `withLock` short: loop threads wait on the same lock.
public final class Locked<Value: ~Copyable>: @unchecked Sendable {
    @usableFromInline let lock = NSLock()
    @usableFromInline var value: Value

    public init(_ value: consuming Value) {
        self.value = value
    }

    /// Runs `body` with exclusive access to the value. Safe from any thread; never re-entrant.
    /// Inlinable, so that every module that uses it specializes it: unspecialized, each call went
    /// through a generic entry point and copied its result through value witnesses.
    @inlinable
    public func withLock<Result: ~Copyable, E: Error>(
        _ body: (inout Value) throws(E) -> Result
    ) throws(E) -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
