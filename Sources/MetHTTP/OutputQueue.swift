import Foundation
import MetEngine

/// The bytes of a connection's responses that the socket did not take at once, in order: runs of
/// memory chunks written with `writev` (with `MSG_MORE` when a file follows, so that a head and its
/// file leave in full segments), and file bodies written with `sendfile` (the kernel copies them
/// from the page cache; they never pass through this process). Each chunk knows whether writing it
/// completes a response, so the loop's count of replies not yet written stays exact. Loop thread
/// only.
struct OutputQueue {
    /// Where a chunk's bytes are.
    private enum Source {
        case memory([UInt8])
        case file(FileSlice)
    }

    /// A chunk queued for the socket, written up to `offset`.
    private struct Pending {
        var source: Source
        /// Bytes of the chunk already written.
        var offset: Int
        /// Writing this chunk completes a response.
        var endsResponse: Bool

        var length: Int {
            switch source {
            case .memory(let bytes): bytes.count
            case .file(let slice): slice.length
            }
        }

        var isFile: Bool {
            if case .file = source { return true }
            return false
        }
    }

    private var pending: [Pending] = []
    /// Bytes queued, not yet written.
    private(set) var bytes = 0

    var isEmpty: Bool { pending.isEmpty }

    /// Queues what is left of a response's `head` and `body` once the first `written` bytes of the
    /// two were sent.
    mutating func queue(head: [UInt8], body: [UInt8], written: Int, endsResponse: Bool) {
        if written < head.count {
            append(Pending(source: .memory(head), offset: written, endsResponse: endsResponse && body.isEmpty))
            if !body.isEmpty { append(Pending(source: .memory(body), offset: 0, endsResponse: endsResponse)) }
        } else {
            append(Pending(source: .memory(body), offset: written - head.count, endsResponse: endsResponse))
        }
    }

    /// Queues a body sent from a file, after what is queued (its head, usually).
    mutating func queue(file: FileSlice, endsResponse: Bool) {
        append(Pending(source: .file(file), offset: 0, endsResponse: endsResponse))
    }

    private mutating func append(_ chunk: Pending) {
        bytes += chunk.length - chunk.offset
        pending.append(chunk)
    }

    /// Writes as much as `descriptor` takes, chunk after chunk until the socket is full: the bytes
    /// written (-1 when the connection failed, or a file ended before its slice did) and how many
    /// responses that completed.
    mutating func write(to descriptor: CInt) -> (written: Int, responsesEnded: Int) {
        var total = 0
        var ended = 0
        while let first = pending.first {
            let wanted: Int
            let sent: Int
            if case .file(let slice) = first.source {
                wanted = first.length - first.offset
                var position = off_t(slice.offset + first.offset)
                sent = sendfile(descriptor, slice.file.descriptor, &position, wanted)
                // Fewer bytes in the file than its slice: the response cannot be finished.
                if sent == 0 && wanted > 0 { return (-1, ended) }
            } else {
                (wanted, sent) = writeMemory(to: descriptor)
            }
            if sent < 0 {
                return (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? total : -1, ended)
            }
            total += sent
            ended += consume(sent)
            if sent < wanted { break }  // The socket is full.
        }
        return (total, ended)
    }

    /// Writes the memory chunks at the front (up to 16, up to the next file) in one call: how many
    /// bytes were offered and how many written (-1 on error, with `errno`).
    private func writeMemory(to descriptor: CInt) -> (wanted: Int, sent: Int) {
        let batch = pending.prefix { !$0.isFile }.prefix(16)
        let fileFollows = batch.count < pending.count && pending[batch.count].isFile
        var vectors: [iovec] = []
        vectors.reserveCapacity(batch.count)
        var wanted = 0
        // The arrays stay alive in `pending` while the call reads from them.
        for chunk in batch {
            guard case .memory(let array) = chunk.source else { continue }
            array.withUnsafeBytes { bytes in
                vectors.append(
                    iovec(
                        iov_base: UnsafeMutableRawPointer(mutating: bytes.baseAddress! + chunk.offset),
                        iov_len: bytes.count - chunk.offset))
            }
            wanted += array.count - chunk.offset
        }
        let sent = vectors.withUnsafeMutableBufferPointer { vectors in
            var message = msghdr()
            message.msg_iov = vectors.baseAddress
            message.msg_iovlen = vectors.count
            return sendmsg(descriptor, &message, fileFollows ? Int32(MSG_MORE) : 0)
        }
        return (wanted, sent)
    }

    /// Drops `written` bytes from the front; returns how many responses that completed.
    private mutating func consume(_ written: Int) -> Int {
        var left = written
        var ended = 0
        bytes -= written
        while var first = pending.first {
            let remaining = first.length - first.offset
            guard left >= remaining else {
                first.offset += left
                pending[0] = first
                break
            }
            left -= remaining
            pending.removeFirst()
            if first.endsResponse { ended += 1 }
        }
        return ended
    }

    /// Drops everything queued; returns how many responses will now never be written.
    mutating func removeAll() -> Int {
        let unfinished = pending.count { $0.endsResponse }
        pending = []
        bytes = 0
        return unfinished
    }
}
