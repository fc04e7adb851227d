import CDeflate
import Foundation

/// gzip (RFC 1952) compression over libdeflate: the copies themet keeps of cached bodies, and the
/// fake Met's bodies. (Upstream answers are decoded by libcurl.) Any thread.
///
/// libdeflate compresses a whole body in one call into a buffer sized by its bound, about three
/// times as fast as zlib at the same level and a little smaller. A compressor holds a few hundred
/// KiB of tables and serves one call at a time: idle ones wait in a pool, so a fill allocates
/// none, and a call that finds none free makes one (the pool then keeps it, up to `poolLimit`).
public enum Gzip {
    /// The level every copy is made at: libdeflate's 6, its default, close to zlib's 9 in size.
    public static let level: Int32 = 6
    /// The most idle compressors kept; more are freed after their call.
    private static let poolLimit = 8
    /// The idle compressors, behind `lock` (an `NSLock`: a pthread mutex, which ThreadSanitizer
    /// sees, unlike `Synchronization.Mutex`'s futex).
    nonisolated(unsafe) private static var idle: [Compressor] = []
    private static let lock = NSLock()

    /// A libdeflate compressor: one call at a time, by whoever took it from the pool.
    private final class Compressor: @unchecked Sendable {
        let handle: OpaquePointer

        init() {
            // Null only when memory cannot be allocated, which is treated as fatal.
            guard let handle = libdeflate_alloc_compressor(Gzip.level) else {
                preconditionFailure("libdeflate_alloc_compressor failed (out of memory)")
            }
            self.handle = handle
        }

        deinit { libdeflate_free_compressor(handle) }
    }

    /// Compresses `bytes` into one gzip member.
    ///
    /// - Parameter bytes: the data; may be empty (the result is then a valid, empty gzip member).
    /// - Returns: the gzip bytes, header and trailer included, in an array of exactly their size.
    public static func compress(_ bytes: [UInt8]) -> [UInt8] {
        let compressor = lock.withLock { idle.popLast() } ?? Compressor()
        defer { lock.withLock { if idle.count < poolLimit { idle.append(compressor) } } }
        let bound = libdeflate_gzip_compress_bound(compressor.handle, bytes.count)
        let output = [UInt8](unsafeUninitializedCapacity: bound) { buffer, count in
            count = bytes.withUnsafeBytes { input in
                libdeflate_gzip_compress(
                    compressor.handle, input.baseAddress, input.count, buffer.baseAddress, buffer.count)
            }
        }
        // 0 means the bound was too small, which libdeflate's own bound rules out.
        precondition(!output.isEmpty, "libdeflate_gzip_compress overflowed its own bound")
        // A cached copy lives as long as its entry: exactly sized, without the bound's slack (the
        // bound is the input's size and more; JSON compresses to a third of it).
        return [UInt8](unsafeUninitializedCapacity: output.count) { buffer, count in
            count = buffer.initialize(fromContentsOf: output)
        }
    }
}
