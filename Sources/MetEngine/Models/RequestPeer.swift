/// The other end of a request's connection, as the HTTP layer read it once, when it accepted the
/// connection; each request of the connection carries it. What the server decides about the
/// client (its share of the upstream, whether it is on this machine, what the access log shows)
/// starts here, and `TrustedProxies` looks behind it when it is a trusted proxy.
public struct RequestPeer: Sendable {
    /// The peer's IP address; nil for a Unix-domain socket, or when it could not be read.
    public let address: IPAddress?
    /// Whether the peer is on this machine: a loopback address, or a Unix-domain socket.
    public let isLoopback: Bool
    /// The address (`IPAddress.text`), `unix`, or `-` when unknown: for the access log, and whom
    /// the peer's share of the upstream belongs to.
    public let text: String

    /// A peer at `address`.
    public init(address: IPAddress) {
        self.address = address
        isLoopback = address.isLoopback
        text = address.text
    }

    private init(text: String, isLoopback: Bool) {
        address = nil
        self.isLoopback = isLoopback
        self.text = text
    }

    /// The other end of a Unix-domain socket: on this machine.
    public static let unixSocket = RequestPeer(text: "unix", isLoopback: true)
    /// A peer whose address is not known (a request made in process, or an unreadable address):
    /// never on this machine, as far as anything that depends on it is concerned.
    public static let unknown = RequestPeer(text: "-", isLoopback: false)
}
