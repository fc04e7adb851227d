import Foundation

/// Bytes received on one connection and not consumed yet, in one contiguous block that grows
/// (up to `limit`) and compacts as requests are taken off the front. Holds no memory until the
/// first `freeSpace` and again after `release()`, so idle connections cost nothing here. Owned by
/// one connection on its loop thread; `deallocate()` exactly once.
struct ReceiveBuffer {
    private var storage: UnsafeMutableRawPointer?
    private var capacity = 0
    private var start = 0
    private var end = 0
    /// The most bytes it will ever hold.
    let limit: Int
    /// Bytes allocated by the first `freeSpace` after an empty buffer (most requests fit).
    private let initialCapacity: Int

    /// - Parameters:
    ///   - initialCapacity: bytes allocated when the first bytes are about to arrive.
    ///   - limit: the largest it may grow to.
    init(initialCapacity: Int = 4_096, limit: Int) {
        self.initialCapacity = min(initialCapacity, limit)
        self.limit = limit
    }

    /// How many bytes are waiting.
    var count: Int { end - start }

    /// The waiting bytes; valid until the next mutating call.
    var bytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: storage.map { $0 + start }, count: end - start) }

    /// Room for the next read: at least `wanted` bytes when the limit allows, fewer (possibly
    /// none) when the buffer is close to `limit`. Valid until the next mutating call.
    mutating func freeSpace(wanted: Int = 4_096) -> UnsafeMutableRawBufferPointer {
        if start == end {
            start = 0
            end = 0
        }
        if capacity - end < wanted && start > 0, let storage {
            memmove(storage, storage + start, end - start)
            end -= start
            start = 0
        }
        if capacity - end < wanted && capacity < limit {
            let grown = min(limit, max(capacity * 2, end + wanted, initialCapacity))
            let replacement = UnsafeMutableRawPointer.allocate(byteCount: grown, alignment: 16)
            if let storage {
                replacement.copyMemory(from: storage, byteCount: end)
                storage.deallocate()
            }
            storage = replacement
            capacity = grown
        }
        return UnsafeMutableRawBufferPointer(start: storage.map { $0 + end }, count: capacity - end)
    }

    /// Records that `count` bytes were written into `freeSpace()`.
    mutating func didReceive(_ count: Int) {
        end += count
    }

    /// Drops `count` bytes from the front.
    mutating func consume(_ count: Int) {
        start += count
    }

    /// Frees the storage when no bytes are waiting (the next `freeSpace` allocates afresh).
    mutating func release() {
        guard start == end, let storage else { return }
        storage.deallocate()
        self.storage = nil
        capacity = 0
        start = 0
        end = 0
    }

    func deallocate() {
        storage?.deallocate()
    }
}
