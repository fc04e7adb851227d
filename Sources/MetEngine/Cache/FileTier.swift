/// A persistent tier that keeps each entry's body in a file of its own, and can hand that file out
/// so that a response sends it with `sendfile` instead of copying the bytes memory holds through
/// user space (the picture files, `ImageFileTier`).
public protocol FileTier: PersistentTier {
    /// The file that holds exactly the body of the entry with `key` and strong `etag`, opened for
    /// reading; nil when the tier holds another version, none, or a file changed since it was
    /// checked (the caller then sends the bytes memory holds). Opens a file and checks it with
    /// `fstat` against what the tier verified: cheap enough for a loop thread, and never reads the
    /// file there. Any thread.
    func openFile(key: String, etag: String) -> OpenFile?
}
