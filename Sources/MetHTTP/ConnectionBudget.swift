import MetEngine

/// The server-wide cap on open client connections (`--max-connections`), shared by every loop.
/// A loop that finds the cap reached with a client waiting stops accepting, and is resumed
/// (through its job queue) as soon as any loop's connection closes; new connections wait in the
/// kernel's backlog meanwhile. Any thread.
final class ConnectionBudget: Sendable {
    private struct State {
        var open = 0
        var waiting: [ConnectionAcceptor] = []
        var inEpisode = false
    }

    /// The most connections open at once, across loops.
    let limit: Int
    /// Where an episode of waiting clients ends, so that a server held at its cap logs once rather
    /// than on every close: half the cap.
    private let quietLevel: Int
    private let state = Locked(State())

    init(limit: Int) {
        precondition(limit >= 1, "a connection cap of at least 1")
        self.limit = limit
        quietLevel = limit / 2
    }

    /// Takes a slot for a connection `acceptor` is about to accept; false when the cap is reached,
    /// in which case `acceptor` is resumed by the next `release()`.
    func acquire(for acceptor: ConnectionAcceptor) -> Bool {
        state.withLock { state in
            guard state.open < limit else {
                if !state.waiting.contains(where: { $0 === acceptor }) { state.waiting.append(acceptor) }
                return false
            }
            state.open += 1
            return true
        }
    }

    /// Records that a client waits at the cap; true only for the first time since the count last
    /// fell to half the cap (the one worth a log line).
    func clientWaits() -> Bool {
        state.withLock { state in
            defer { state.inEpisode = true }
            return !state.inEpisode
        }
    }

    /// Gives back the slot of a connection that closed (or was never accepted), and resumes the
    /// acceptors waiting for one.
    func release() {
        let waiting = state.withLock { state -> [ConnectionAcceptor] in
            state.open -= 1
            if state.open <= quietLevel { state.inEpisode = false }
            defer { state.waiting = [] }
            return state.waiting
        }
        for acceptor in waiting { acceptor.resume() }
    }
}
