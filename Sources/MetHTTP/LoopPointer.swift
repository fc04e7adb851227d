import CLibevent

/// A libevent pointer that may be carried across threads but is only dereferenced on the thread
/// of the loop that owns it. The compiler cannot check that; review must.
struct LoopPointer: @unchecked Sendable {
    let raw: OpaquePointer

    init(_ raw: OpaquePointer) {
        self.raw = raw
    }
}
