/// The upstream's state as `/health` reports it.
public enum UpstreamState: Sendable, Equatable {
    /// The last call got an HTTP answer the server could use, no call was made yet, or a
    /// firewall block has ended.
    case ok
    /// The firewall is blocking this server; no calls are made until the time given
    /// (seconds since 1970).
    case blocked(until: Double)
    /// The last call failed: unreachable, timed out, 5xx or malformed.
    case unreachable

    /// The name shown in `/health`.
    public var name: String {
        switch self {
        case .ok: "ok"
        case .blocked: "blocked"
        case .unreachable: "unreachable"
        }
    }
}

/// How each upstream call ended, for `/health` (and later `/metrics`).
public enum UpstreamOutcome: String, Sendable, CaseIterable {
    case ok, notFound, blocked, serverError, clientError, unreachable, timeout, malformed, cancelled
}

/// Tracks the upstream's state and counts calls by outcome. Shared by every request; any thread.
///
/// While a firewall block lasts, `blockedUntil(at:)` tells callers not to call the upstream at all:
/// a blocked client that keeps knocking only extends its block (API.md §6).
public final class UpstreamMonitor: Sendable {
    private struct State {
        var blockedUntil: Double = 0
        var lastFailed = false
        var lastError: String?
        var counts: [UpstreamOutcome: Int] = [:]
    }

    private let state = Locked(State())
    /// How long a 403 block pauses all upstream calls, in seconds.
    public let blockCooldown: Double

    public init(blockCooldown: Double) {
        self.blockCooldown = blockCooldown
    }

    /// The end of the current block (seconds since 1970), or nil when not blocked at `time`.
    public func blockedUntil(at time: Double) -> Double? {
        state.withLock { $0.blockedUntil > time ? $0.blockedUntil : nil }
    }

    /// Records how one call ended, at `time`.
    public func record(_ outcome: UpstreamOutcome, at time: Double, error: String? = nil) {
        state.withLock { state in
            state.counts[outcome, default: 0] += 1
            switch outcome {
            case .ok, .notFound, .clientError:
                state.lastFailed = false
            case .blocked:
                // The block itself is the state while it lasts; once it ends, nothing says the
                // upstream is failing, so the state returns to ok.
                state.blockedUntil = time + blockCooldown
                state.lastFailed = false
                state.lastError = error
            case .serverError, .unreachable, .timeout, .malformed:
                state.lastFailed = true
                state.lastError = error
            case .cancelled:
                break
            }
        }
    }

    /// The state at `time`.
    public func state(at time: Double) -> UpstreamState {
        state.withLock { state in
            if state.blockedUntil > time { return .blocked(until: state.blockedUntil) }
            return state.lastFailed ? .unreachable : .ok
        }
    }

    /// The most recent failure's description, if any.
    public var lastError: String? { state.withLock { $0.lastError } }

    /// Calls so far, by outcome (every outcome present, zeros included).
    public var counts: [(UpstreamOutcome, Int)] {
        state.withLock { state in UpstreamOutcome.allCases.map { ($0, state.counts[$0, default: 0]) } }
    }
}
