import CDeflate
import Foundation

/// gzip (RFC 1952) over libdeflate: the copies themet keeps of cached bodies, the fake Met's bodies,
/// and the upstream's gzip bodies read back (`decompress`). Any thread.
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

    /// Why `decompress` gave no body.
    public enum DecodingError: Error, Equatable {
        /// The member says it holds more than the limit: nothing was inflated.
        case tooLarge
        /// Not one whole gzip member (torn, damaged, trailing bytes, a checksum or length that
        /// does not match what it inflates to).
        case damaged
    }

    /// The bytes one gzip member `gzip` holds, if it inflates to at most `limit` bytes. The member's
    /// own length field (ISIZE) sizes the output, so a body that claims more than `limit` is refused
    /// before anything is inflated, and one that inflates to more than it claims is refused as
    /// damaged (libdeflate stops at the end of the buffer it was given). Hostile input is safe.
    public static func decompress(_ gzip: [UInt8], limit: Int) -> Result<[UInt8], DecodingError> {
        // A header (10 bytes), a deflate stream (at least 2) and the trailer (8).
        guard gzip.count >= 20 else { return .failure(.damaged) }
        let size = gzip.withUnsafeBytes {
            Int(UInt32(littleEndian: $0.loadUnaligned(fromByteOffset: $0.count - 4, as: UInt32.self)))
        }
        guard size <= limit else { return .failure(.tooLarge) }
        guard let decompressor = libdeflate_alloc_decompressor() else {
            preconditionFailure("libdeflate_alloc_decompressor failed (out of memory)")
        }
        defer { libdeflate_free_decompressor(decompressor) }
        var consumed = 0
        var result = LIBDEFLATE_BAD_DATA
        let body = [UInt8](unsafeUninitializedCapacity: max(size, 1)) { buffer, count in
            var produced = 0
            result = gzip.withUnsafeBytes { input in
                libdeflate_gzip_decompress_ex(
                    decompressor, input.baseAddress, input.count, buffer.baseAddress, size, &consumed, &produced)
            }
            count = result == LIBDEFLATE_SUCCESS ? produced : 0
        }
        guard result == LIBDEFLATE_SUCCESS, consumed == gzip.count, body.count == size else {
            return .failure(.damaged)
        }
        return .success(body)
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
        // The bound is the input's size and more; JSON compresses to a third of it.
        return exactlySized(output)
    }

    /// `bytes` in an array of exactly their size: a cached copy lives as long as its entry, so
    /// without the slack of a bound or of an array grown by appending (up to twice its bytes).
    public static func exactlySized(_ bytes: [UInt8]) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: bytes.count) { buffer, count in
            count = buffer.initialize(fromContentsOf: bytes)
        }
    }
}
