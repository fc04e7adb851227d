import MetEngine

/// Who may purge: with `--admin-token`, whoever sends it (this machine included); without, only a
/// client straight on this machine. Any thread.
struct PurgeRule: Sendable {
    /// `--admin-token`: when set, the one way to purge, from anywhere (this machine included).
    let adminToken: String?
    /// `--trusted-proxy`: a request through one of them is never "from this machine".
    let proxies: TrustedProxies

    /// Throws `forbidden` unless `request` may purge; `action` names what was asked in the
    /// problem's detail ("Purging", "Taking a snapshot").
    func check(_ request: Request, for action: String) throws(Problem) {
        if adminToken != nil {
            guard isAdmin(request) else {
                throw Problem(.forbidden, "\(action) needs Authorization: Bearer and the server's --admin-token.")
            }
        } else if !isLocal(request) {
            throw Problem(
                .forbidden,
                "\(action) is allowed only from this machine, not through a proxy; the server's --admin-token "
                    + "allows it from anywhere.")
        }
    }

    /// Whether `request` comes straight from this machine: its peer is loopback, is not a trusted
    /// proxy, and it carries no forwarding field (a proxy on this host, trusted or not, never makes a
    /// remote client local; one that adds no such field cannot be told from a local client, which
    /// is why the README's proxy set-ups all add one, and why `--admin-token` is safer).
    private func isLocal(_ request: Request) -> Bool {
        guard request.peer.isLoopback else { return false }
        guard let address = request.peer.address else { return !TrustedProxies.hasForwardingField(request.headers) }
        return proxies.client(peer: address, fields: request.headers).isLocal
    }

    /// Whether `request` carries `Authorization: Bearer <--admin-token>` (compared in constant time).
    private func isAdmin(_ request: Request) -> Bool {
        guard let token = adminToken, let field = request.headers["Authorization"] else { return false }
        let given = Array(field.utf8)
        let expected = Array(("Bearer " + token).utf8)
        guard given.count == expected.count else { return false }
        var difference: UInt8 = 0
        for (a, b) in zip(given, expected) { difference |= a ^ b }
        return difference == 0
    }
}
