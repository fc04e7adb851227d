import Glibc

/// A file opened for reading, closed when its last holder lets it go: the source of a body sent
/// with `sendfile` (`FileSlice`). Only ever read at explicit offsets, never through the
/// descriptor's own position, so any number of responses may send from it at once. Any thread.
public final class OpenFile: Sendable {
    /// The descriptor, owned: closed in `deinit`.
    public let descriptor: CInt

    /// Takes ownership of `descriptor`.
    public init(descriptor: CInt) {
        self.descriptor = descriptor
    }

    deinit { close(descriptor) }
}

/// A body sent from a file rather than from memory: `length` bytes of `file` from `offset`, copied
/// by the kernel from the page cache to the socket (`sendfile`). Made when a `FileBody` is sent,
/// by whoever checked that those bytes are the response's (`FileTier.openFile`).
public struct FileSlice: Sendable {
    public let file: OpenFile
    /// Where the body starts in the file, in bytes.
    public let offset: Int
    /// The body's length in bytes.
    public let length: Int

    public init(file: OpenFile, offset: Int, length: Int) {
        self.file = file
        self.offset = offset
        self.length = length
    }
}

/// A response's body that goes out of a file when it is sent: `length` bytes from `offset` of the
/// file `open` opens then, or the same bytes of `whole` (the body memory holds) when the file cannot
/// be opened at that moment (evicted, replaced, changed on disk). A response that holds one holds
/// no descriptor, so it can be shared by many requests and kept (a plain hit's, for a second)
/// without keeping a file open; each send opens the file, and closes it when its bytes are out.
/// The exception, `init(file:length:)`: a file opened for one response, with no copy in memory.
/// Any thread.
public struct FileBody: Sendable {
    /// Where the body starts in the file and in `whole`, in bytes.
    public let offset: Int
    /// The body's length in bytes.
    public let length: Int
    /// The file's whole content as memory holds it (shared storage, not a copy); nil for a file
    /// opened for one response (`init(file:length:)`), which has no copy in memory.
    private let whole: [UInt8]?
    /// Opens the file holding exactly `whole`, or returns nil; called on the thread that sends.
    private let open: @Sendable () -> OpenFile?

    /// - Parameters:
    ///   - whole: the file's content; `offset..<offset + length` must lie within it.
    ///   - open: opens the file, checked to hold `whole`, or returns nil. It must not capture
    ///     what may keep the response (a cache entry holding its shared answers would be a cycle).
    public init(offset: Int, length: Int, whole: [UInt8], open: @escaping @Sendable () -> OpenFile?) {
        precondition(offset >= 0 && length >= 0 && offset + length <= whole.count, "a body beyond its bytes")
        self.offset = offset
        self.length = length
        self.whole = whole
        self.open = open
    }

    /// A body sent whole from `file`, already open, `length` bytes from its start, with no copy in
    /// memory: for a file made for one response (a snapshot), which the response keeps open until
    /// it is sent. Not for responses that are shared or kept.
    public init(file: OpenFile, length: Int) {
        offset = 0
        self.length = max(0, length)
        whole = nil
        open = { file }
    }

    /// The slice to send, opening the file now; nil when it cannot be opened (send `bytes()`).
    public func slice() -> FileSlice? {
        open().map { FileSlice(file: $0, offset: offset, length: length) }
    }

    /// The same bytes from memory: shares `whole`'s storage when the body is all of it. Empty for
    /// a body made from an open file, whose `slice()` is never nil.
    public func bytes() -> [UInt8] {
        guard let whole else { return [] }
        return offset == 0 && length == whole.count ? whole : Array(whole[offset..<offset + length])
    }
}
