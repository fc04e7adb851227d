/// Limits on what a client may send; each breach is answered with its own status and problem.
public struct RequestLimits: Sendable, Equatable {
    /// The longest request target, in bytes (414 beyond). Default 8 KiB.
    public var maxURILength = 8_192
    /// The most bytes of header fields, names and values together (431 beyond). Default 16 KiB.
    public var maxHeaderBytes = 16_384
    /// The largest request body, in bytes (413 beyond). Default 64 KiB.
    public var maxBodyBytes = 65_536

    public init() {}
}
