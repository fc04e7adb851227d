import MetEngine

/// The encoded heads of shared responses (`Response.shared`), kept for the current second: a
/// response that many requests share is encoded once per second for each way it is sent, since
/// the head depends on the response's identity, `Date` (the second), the HTTP minor version,
/// HEAD or not, and whether the connection closes. One per loop; loop thread only.
struct EncodedHeads {
    private struct Key: Hashable {
        let response: ObjectIdentifier
        let minorVersion: Int
        let isHead: Bool
        let close: Bool
    }

    /// The most heads kept within one second; beyond it, heads are encoded per response.
    static let capacity = 4_096

    private var second = Int.min
    /// Each head with the identity it was made for, held so that the identifier is not reused.
    private var heads: [Key: (shared: SharedResponse, head: [UInt8])] = [:]

    /// The head of `response` (shared as `shared`), as sent in `second` with `date` as its
    /// `Date` line: made by `ResponseEncoder` the first time in the second, then reused.
    mutating func head(
        of response: Response, shared: SharedResponse, isHead: Bool, minorVersion: Int, close: Bool,
        second: Int, date: [UInt8]
    ) -> [UInt8] {
        if second != self.second {
            self.second = second
            heads.removeAll(keepingCapacity: true)
        }
        let key = Key(response: ObjectIdentifier(shared), minorVersion: minorVersion, isHead: isHead, close: close)
        if let kept = heads[key] { return kept.head }
        let head = ResponseEncoder.encode(
            response, isHead: isHead, minorVersion: minorVersion, close: close, date: date
        ).head
        if heads.count < Self.capacity { heads[key] = (shared, head) }
        return head
    }
}
