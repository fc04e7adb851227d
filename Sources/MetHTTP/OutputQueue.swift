import Foundation

/// The bytes of a connection's responses that the socket did not take at once, in order, written
/// with `writev` as it takes more. Each chunk knows whether writing it completes a response, so the
/// loop's count of replies not yet written stays exact. Loop thread only.
struct OutputQueue {
    /// Bytes queued for the socket, from one array, starting at `offset`.
    private struct Pending {
        var bytes: [UInt8]
        var offset: Int
        /// Writing this chunk completes a response.
        var endsResponse: Bool
    }

    private var pending: [Pending] = []
    /// Bytes queued, not yet written.
    private(set) var bytes = 0

    var isEmpty: Bool { pending.isEmpty }

    /// Queues what is left of a response's `head` and `body` once the first `written` bytes of the
    /// two were sent.
    mutating func queue(head: [UInt8], body: [UInt8], written: Int, endsResponse: Bool) {
        if written < head.count {
            append(Pending(bytes: head, offset: written, endsResponse: endsResponse && body.isEmpty))
            if !body.isEmpty { append(Pending(bytes: body, offset: 0, endsResponse: endsResponse)) }
        } else {
            append(Pending(bytes: body, offset: written - head.count, endsResponse: endsResponse))
        }
    }

    private mutating func append(_ chunk: Pending) {
        bytes += chunk.bytes.count - chunk.offset
        pending.append(chunk)
    }

    /// Writes as much as `descriptor` takes (up to 16 chunks in one `writev`): the bytes written (-1
    /// when the connection failed) and how many responses that completed.
    mutating func write(to descriptor: CInt) -> (written: Int, responsesEnded: Int) {
        let batch = pending.prefix(16)
        var vectors: [iovec] = []
        vectors.reserveCapacity(batch.count)
        // The arrays stay alive in `pending` while writev reads from them.
        for chunk in batch {
            chunk.bytes.withUnsafeBytes { bytes in
                vectors.append(
                    iovec(
                        iov_base: UnsafeMutableRawPointer(mutating: bytes.baseAddress! + chunk.offset),
                        iov_len: bytes.count - chunk.offset))
            }
        }
        var written = writev(descriptor, &vectors, Int32(vectors.count))
        if written < 0 { return (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? 0 : -1, 0) }
        let total = written
        var ended = 0
        bytes -= written
        while written > 0, var first = pending.first {
            let remaining = first.bytes.count - first.offset
            if written >= remaining {
                written -= remaining
                pending.removeFirst()
                if first.endsResponse { ended += 1 }
            } else {
                first.offset += written
                pending[0] = first
                written = 0
            }
        }
        return (total, ended)
    }

    /// Drops everything queued; returns how many responses will now never be written.
    mutating func removeAll() -> Int {
        let unfinished = pending.count { $0.endsResponse }
        pending = []
        bytes = 0
        return unfinished
    }
}
