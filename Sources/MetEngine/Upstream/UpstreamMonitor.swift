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
/// a blocked client that keeps knocking only extends its block (docs/MET-API.md §6). This is the breaker:
/// a block page opens it for the current cool-down; it closes by itself when the cool-down ends.
/// A repeat block (one that comes within one cool-down after the previous block ended) doubles the
/// cool-down, up to `cooldownLimit`; an answer the server can use (`ok`, `notFound`) outside a
/// block resets it to `blockCooldown`.
public final class UpstreamMonitor: Sendable {
    /// The longest cool-down a run of repeat blocks doubles up to, in seconds (15 minutes), unless
    /// the configured base is longer still.
    public static let maximumCooldown = 900.0

    private struct State {
        /// The end of the latest block, seconds since 1970; nil before the first, and again once
        /// a usable answer has reset the breaker.
        package var blockedUntil: Double?
        /// The latest block's length, or the base when none has repeated since the last reset.
        package var cooldown: Double
        package var lastFailed = false
        package var lastError: String?
        package var counts: [UpstreamOutcome: Int] = [:]
        /// Blocks begun (not extended), since start-up.
        package var trips = 0
    }

    private let state: Locked<State>
    /// The configured cool-down (`--block-cooldown`), in seconds: how long a first block pauses all
    /// upstream calls.
    public let blockCooldown: Double

    /// - Parameter blockCooldown: seconds; the base cool-down.
    public init(blockCooldown: Double) {
        self.blockCooldown = blockCooldown
        state = Locked(State(cooldown: blockCooldown))
    }

    /// The longest cool-down, in seconds: `maximumCooldown`, or the base when that is longer.
    public var cooldownLimit: Double { max(blockCooldown, Self.maximumCooldown) }

    /// The current cool-down, in seconds: the length of the latest block, or `blockCooldown` when
    /// there was none or a usable answer has reset it. A repeat block would last twice this.
    public var currentCooldown: Double { state.withLock { $0.cooldown } }

    /// The end of the current block (seconds since 1970), or nil when not blocked at `time`.
    public func blockedUntil(at time: Double) -> Double? {
        state.withLock { state in
            guard let until = state.blockedUntil, until > time else { return nil }
            return until
        }
    }

    /// What a recorded call changed about the block (for the log).
    public enum BlockChange: Equatable, Sendable {
        /// A block began, pausing upstream calls until `until` (seconds since 1970) for
        /// `cooldown` seconds (doubled when it repeats one that just ended).
        case started(until: Double, cooldown: Double)
        /// A usable answer after a block: the firewall lets this server through again.
        case ended
    }

    /// Records how one call ended, at `time`; returns what it changed about the block, if anything.
    @discardableResult
    public func record(_ outcome: UpstreamOutcome, at time: Double, error: String? = nil) -> BlockChange? {
        state.withLock { state -> BlockChange? in
            state.counts[outcome, default: 0] += 1
            switch outcome {
            case .ok, .notFound:
                state.lastFailed = false
                // A usable answer outside a block shows the firewall lets this server through
                // again: the next block is a first one, at the base cool-down.
                if (state.blockedUntil ?? 0) <= time {
                    let wasBlocked = state.blockedUntil != nil
                    state.cooldown = blockCooldown
                    state.blockedUntil = nil
                    if wasBlocked { return .ended }
                }
            case .clientError:
                state.lastFailed = false
            case .blocked:
                let begins = (state.blockedUntil ?? 0) <= time
                startBlock(&state, at: time)
                // The block itself is the state while it lasts; once it ends, nothing says the
                // upstream is failing, so the state returns to ok.
                state.lastFailed = false
                state.lastError = error
                if begins, let until = state.blockedUntil { return .started(until: until, cooldown: state.cooldown) }
            case .serverError, .unreachable, .timeout, .malformed:
                state.lastFailed = true
                state.lastError = error
            case .cancelled:
                break
            }
            return nil
        }
    }

    /// Opens the breaker for `seconds` from `time` for a block another instance of the group saw
    /// (its notice arrived at `time`), at most `cooldownLimit`: a notice can only say what a block
    /// of this group could be, whatever clock or intent sent it. A longer block already open is
    /// kept. A block that begins this way is counted as a trip, but its cool-down stays this
    /// instance's own.
    public func adoptBlock(for seconds: Double, at time: Double) {
        guard seconds.isFinite, seconds > 0 else { return }
        let until = time + min(seconds, cooldownLimit)
        state.withLock { state in
            guard until > time, until > (state.blockedUntil ?? 0) else { return }
            if (state.blockedUntil ?? 0) <= time { state.trips += 1 }
            state.blockedUntil = until
            state.lastFailed = false
            state.lastError = "blocked by the firewall (seen by another instance of the group)"
        }
    }

    /// Opens the breaker for a block page seen at `time`.
    private func startBlock(_ state: inout State, at time: Double) {
        if let until = state.blockedUntil, until > time {
            // A call that was already in flight when the block began: the same block, which now
            // runs a full cool-down from this answer, but it is no repeat.
            state.blockedUntil = max(until, time + state.cooldown)
            return
        }
        state.trips += 1
        if let until = state.blockedUntil, time <= until + state.cooldown {
            state.cooldown = min(state.cooldown * 2, cooldownLimit)
        } else {
            state.cooldown = blockCooldown
        }
        state.blockedUntil = time + state.cooldown
    }

    /// The state at `time`.
    public func state(at time: Double) -> UpstreamState {
        state.withLock { state in
            if let until = state.blockedUntil, until > time { return .blocked(until: until) }
            return state.lastFailed ? .unreachable : .ok
        }
    }

    /// The most recent failure's description, if any.
    public var lastError: String? { state.withLock { $0.lastError } }

    /// Firewall blocks begun since start-up (a call answered during a block extends it and is not
    /// counted), for `/metrics`.
    public var trips: Int { state.withLock { $0.trips } }

    /// Calls so far, by outcome (every outcome present, zeros included).
    public var counts: [(UpstreamOutcome, Int)] {
        state.withLock { state in UpstreamOutcome.allCases.map { ($0, state.counts[$0, default: 0]) } }
    }
}
