/// Who sent a request, as far as the connection and the proxies the server trusts can tell:
/// `TrustedProxies.client(peer:fields:)` makes it.
public struct RequestClient: Sendable, Equatable {
    /// For the access log: the client's address (`203.0.113.7`, `2001:db8::1`), `unknown` when a
    /// proxy did not know it, a proxy's obfuscated identifier (`_hidden`), or `-` when the
    /// connection's peer could not be read.
    public var address: String
    /// Whom a share of the upstream belongs to: the client's whole address (on a LAN every IPv6
    /// host shares its /64, so a host is its address), an obfuscated identifier as it is; a client
    /// a proxy called `unknown` counts as that proxy, those behind a trusted proxy whose field
    /// could not be read share one key of their own, and an unreadable peer is `-`.
    public var fairnessKey: String
    /// Whether the request comes from this machine itself: a loopback peer that is not a trusted
    /// proxy, on a request without any forwarding field. A proxy on this machine that adds one never
    /// makes its remote clients local, trusted or not; one that adds none cannot be told from a
    /// local client.
    public var isLocal: Bool
    /// `http` or `https`, as a trusted proxy says its client asked; nil when it does not say, says
    /// something else, or the peer is not a trusted proxy.
    public var forwardedProto: String?
    /// Whether `address` is what a trusted proxy said rather than the connection's peer.
    public var viaProxy: Bool
}
