/// Why the bytes a client sent are not a request this reader accepts: one case per kind of failure,
/// each with a detail for a person to read. Which status and problem code a failure is answered
/// with is decided by the HTTP layer, not here.
public enum WireError: Error, Sendable, Equatable {
    /// Not an HTTP/1.x request as RFC 9112 has it, read strictly: a bad request line, field line,
    /// line end, `Host` or `Content-Length`, a bad chunk or trailer line, or both `Content-Length`
    /// and `Transfer-Encoding`.
    case malformed(String)
    /// A request target in none of the four forms of RFC 9112 §3.2 valid for its method.
    case invalidTarget(String)
    /// A request line naming an HTTP major version other than 1.
    case unsupportedVersion(String)
    /// A request body in a transfer coding other than chunked.
    case unsupportedTransferCoding(String)
    /// A chunked body that decodes to more bytes than the decoder's limit.
    case bodyTooLarge(String)
    /// A chunked body's trailer section longer than the decoder's limit.
    case trailerTooLarge(String)
}
