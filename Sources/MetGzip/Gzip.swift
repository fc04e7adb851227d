import CZlib

/// gzip (RFC 1952) compression over the system zlib: the copies themet keeps of cached bodies,
/// and the fake Met's bodies. (Upstream answers are decoded by libcurl.) Stateless; safe from
/// any thread.
public enum Gzip {
    /// Output grows in steps of this many bytes.
    private static let chunkSize = 64 * 1024

    /// Compresses `bytes` into one gzip member.
    ///
    /// - Parameters:
    ///   - bytes: the data; may be empty (the result is then a valid, empty gzip member).
    ///   - level: zlib level, 0 (store) … 9 (smallest); default 6.
    /// - Returns: the gzip bytes, header and trailer included.
    /// - Precondition: `level` is 0…9. zlib only fails here when it cannot allocate memory, which
    ///   is treated as fatal.
    public static func compress(_ bytes: [UInt8], level: Int32 = 6) -> [UInt8] {
        precondition((0...9).contains(level), "gzip level must be 0…9, got \(level)")
        var stream = z_stream()
        let initResult = czlib_deflate_init_gzip(&stream, level)
        precondition(initResult == Z_OK, "deflateInit2 failed (\(initResult))")
        defer { deflateEnd(&stream) }

        var output: [UInt8] = []
        output.reserveCapacity(Int(deflateBound(&stream, uLong(bytes.count))))
        var input = bytes
        input.withUnsafeMutableBufferPointer { inputBuffer in
            var consumed = 0
            var chunk = [UInt8](repeating: 0, count: chunkSize)
            while true {
                // avail_in is 32 bits wide: feed very large inputs in slices.
                let slice = min(inputBuffer.count - consumed, Int(UInt32.max))
                stream.next_in = slice > 0 ? inputBuffer.baseAddress! + consumed : nil
                stream.avail_in = uInt(slice)
                let flush = consumed + slice == inputBuffer.count ? Z_FINISH : Z_NO_FLUSH
                var result: Int32 = Z_OK
                repeat {
                    chunk.withUnsafeMutableBufferPointer { out in
                        stream.next_out = out.baseAddress
                        stream.avail_out = uInt(out.count)
                        result = deflate(&stream, flush)
                        // Z_BUF_ERROR only means "no progress possible"; with Z_FINISH and a fresh
                        // output chunk zlib always progresses, so any other code is a real failure.
                        precondition(
                            result == Z_OK || result == Z_STREAM_END || result == Z_BUF_ERROR,
                            "deflate failed (\(result))")
                        output.append(contentsOf: out[0..<(out.count - Int(stream.avail_out))])
                    }
                } while stream.avail_out == 0 || (flush == Z_FINISH && result != Z_STREAM_END)
                consumed += slice
                if flush == Z_FINISH { break }
            }
        }
        // Exactly sized: a cached copy lives as long as its entry, and the deflateBound reserved
        // above is about twice what JSON compresses to.
        return [UInt8](unsafeUninitializedCapacity: output.count) { buffer, count in
            count = buffer.initialize(fromContentsOf: output)
        }
    }
}
