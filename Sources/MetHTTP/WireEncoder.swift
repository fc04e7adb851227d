import HTTPGrammar
import HTTPWire
import MetEngine

/// How a loop turns each answer into the bytes it writes: the head (status line, fields, `Date`,
/// `Content-Length`, `X-Request-Id`) and the body. `Date` is the second written, or a stored
/// answer's fetch time; a shared response's head is encoded once a second for each way it is sent
/// (`EncodedHeads`) and given the request's ID. One per loop (and one in `themet-hitbench`, which
/// runs the hit path without sockets); not thread-safe.
package struct WireEncoder {
    private var date = HTTPDate()
    /// The `Date` line of the last stored answer sent with its fetch time (`Response.date`).
    private var storedDate = HTTPDate()
    private var encodedHeads = EncodedHeads()

    package init() {}

    /// The `Date` field line for `response` written in `second` (since the epoch): when it was
    /// fetched, for a stored answer (`Response.date`, never later than `second`), else `second`.
    package mutating func dateLine(for response: Response, at second: Int) -> [UInt8] {
        guard let fetched = response.date, fetched < second else { return date.line(at: second) }
        return storedDate.line(at: fetched)
    }

    /// `response` as written in `second` to the request known as `requestID`, of HTTP/1.`minorVersion`
    /// (see `ResponseEncoder.encode` for `isHead` and `close`). The body shares the response's
    /// storage (but a chunked one's).
    package mutating func encode(
        _ response: Response, isHead: Bool, minorVersion: Int, close: Bool, requestID: String, at second: Int
    ) -> (head: [UInt8], body: [UInt8]) {
        let date = dateLine(for: response, at: second)
        guard let shared = response.shared, !response.isChunked else {
            return ResponseEncoder.encode(
                response, isHead: isHead, minorVersion: minorVersion, close: close, date: date, requestID: requestID)
        }
        var head = encodedHeads.head(
            of: response, shared: shared, isHead: isHead, minorVersion: minorVersion, close: close, second: second,
            date: date)
        ResponseEncoder.insertRequestID(requestID, into: &head)
        return (head, isHead ? [] : response.body)
    }
}
