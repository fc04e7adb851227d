import CZlib

/// gzip (RFC 1952) over the system zlib: compresses the fake Met's bodies and decodes the real
/// Met's `Content-Encoding: gzip` answers. Stateless; safe from any thread.
public enum Gzip {
    /// Why `decompress(_:)` refused its input.
    public struct DecompressionError: Error, Sendable, Equatable, CustomStringConvertible {
        /// The zlib function that failed.
        public var function: String
        /// zlib's return code (`Z_DATA_ERROR`, `Z_BUF_ERROR` for truncated input, …).
        public var code: Int32
        /// zlib's own message, when it gave one.
        public var message: String

        public var description: String { "\(function) failed (\(code)): \(message)" }
    }

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

    /// Decompresses gzip (or zlib-wrapped) data. Several concatenated gzip members are joined,
    /// as RFC 1952 allows.
    ///
    /// - Parameter bytes: the encoded body.
    /// - Returns: the decoded bytes.
    /// - Throws: `DecompressionError` for corrupt, truncated or empty input.
    public static func decompress(_ bytes: [UInt8]) throws(DecompressionError) -> [UInt8] {
        guard !bytes.isEmpty else {
            throw DecompressionError(function: "inflate", code: Z_BUF_ERROR, message: "empty input")
        }
        var stream = z_stream()
        let initResult = czlib_inflate_init_auto(&stream)
        guard initResult == Z_OK else { throw error("inflateInit2", initResult, stream) }
        defer { inflateEnd(&stream) }

        var output: [UInt8] = []
        output.reserveCapacity(bytes.count * 4)
        var input = bytes
        return try input.withUnsafeMutableBufferPointer { (inputBuffer) throws(DecompressionError) -> [UInt8] in
            var consumed = 0
            var chunk = [UInt8](repeating: 0, count: chunkSize)
            while consumed < inputBuffer.count {
                let slice = min(inputBuffer.count - consumed, Int(UInt32.max))
                stream.next_in = inputBuffer.baseAddress! + consumed
                stream.avail_in = uInt(slice)
                var result: Int32 = Z_OK
                repeat {
                    result = chunk.withUnsafeMutableBufferPointer { out in
                        stream.next_out = out.baseAddress
                        stream.avail_out = uInt(out.count)
                        let code = inflate(&stream, Z_NO_FLUSH)
                        output.append(contentsOf: out[0..<(out.count - Int(stream.avail_out))])
                        return code
                    }
                    guard result == Z_OK || result == Z_STREAM_END else {
                        throw error("inflate", result, stream)
                    }
                } while result != Z_STREAM_END && stream.avail_out == 0
                consumed += slice - Int(stream.avail_in)
                if result == Z_STREAM_END {
                    // Another member may follow; anything else after the trailer is garbage.
                    guard consumed < inputBuffer.count else { return output }
                    let reset = inflateReset(&stream)
                    guard reset == Z_OK else { throw error("inflateReset", reset, stream) }
                } else if stream.avail_in == 0 && consumed == inputBuffer.count {
                    break
                }
            }
            throw DecompressionError(function: "inflate", code: Z_BUF_ERROR, message: "truncated input")
        }
    }

    private static func error(_ function: String, _ code: Int32, _ stream: z_stream) -> DecompressionError {
        let message = stream.msg.map { String(cString: $0) } ?? "no message"
        return DecompressionError(function: function, code: code, message: message)
    }
}
