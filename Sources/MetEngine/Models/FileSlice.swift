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
/// by the kernel from the page cache to the socket (`sendfile`). Whoever makes one has checked that
/// those bytes are the response's (`FileTier.openFile`).
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
