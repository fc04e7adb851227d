import Foundation
import TestKit

@testable import MetCore
@testable import MetEngine

/// What Redis is to a group of instances, in memory, on a manual clock: entries kept as records
/// (so what comes back is a restored entry), fill locks that expire, notices to every member, a
/// GCRA budget and a breaker. Each instance gets its own `Member` (the `SharedTier` it sees); the
/// whole group can be made unavailable, as a Redis that is down.
final class FakeGroup: Sendable {
    private struct State {
        var entries: [String: (record: [UInt8], expires: Double)] = [:]
        var locks: [String: (token: String, expires: Double)] = [:]
        var waiters: [String: [UUID: Waiter]] = [:]
        var handlers: [@Sendable (SharedEvent) -> Void] = []
        var available = true
        /// Each budget's theoretical arrival time (GCRA), by name.
        var tat: [String: Double] = [:]
        /// When each budget's breaker closes, by name.
        var breaker: [String: Double] = [:]
        var nextToken = 0
        /// Tokens taken of the API's budget.
        var tokensTaken = 0
        var beforeNextLock: (@Sendable () -> Void)?
        /// The group's last successful sync (`recordGroupSync`).
        var groupSync: Double?
        /// Entries looked up by every member: in tasks (`entry(for:)`), and without (`entrySoon`).
        var lookups = (inTasks: 0, withoutTask: 0)
    }

    /// One member waiting for a key's fill: resumed once.
    final class Waiter: Sendable {
        let freshAt: Double
        private let continuation: Locked<CheckedContinuation<SharedWait, Never>?>

        init(freshAt: Double, _ continuation: CheckedContinuation<SharedWait, Never>) {
            self.freshAt = freshAt
            self.continuation = Locked(continuation)
        }

        func resume(_ value: SharedWait) {
            let pending = continuation.withLock { pending in
                defer { pending = nil }
                return pending
            }
            pending?.resume(returning: value)
        }
    }

    let time: ManualTime
    private let state = Locked(State())

    init(time: ManualTime) {
        self.time = time
    }

    /// A new instance's view of the group.
    func member() -> any SharedTier { Member(group: self) }

    /// Whether the group answers; false is a Redis that is down.
    var isAvailable: Bool {
        get { state.withLock { $0.available } }
        set { state.withLock { $0.available = newValue } }
    }

    /// Keys the group holds an unexpired entry for.
    var keys: Set<String> {
        let now = time.now()
        return Set(state.withLock { $0.entries.filter { $0.value.expires > now }.keys })
    }

    /// Takes `key`'s lock as an instance that then dies: it never releases it nor announces a fill.
    func lockAsAGhost(_ key: String, for seconds: Double) {
        let expires = time.now() + seconds
        state.withLock { $0.locks[key] = ("ghost", expires) }
    }

    /// Runs `action` once, just before the next lock is decided: what another instance did in
    /// between a member's look and its lock.
    func beforeNextLock(_ action: @escaping @Sendable () -> Void) {
        state.withLock { $0.beforeNextLock = action }
    }

    /// Entries looked up so far by every member, in tasks and without a task.
    var lookups: (inTasks: Int, withoutTask: Int) { state.withLock { $0.lookups } }

    /// Tokens of the budget granted so far.
    var tokensTaken: Int { state.withLock { $0.tokensTaken } }

    /// Members waiting for a fill now.
    var waiting: Int { state.withLock { $0.waiters.values.reduce(0) { $0 + $1.count } } }

    private final class Member: SharedTier {
        let group: FakeGroup

        init(group: FakeGroup) {
            self.group = group
        }

        func entry(for key: String) async -> SharedLookup {
            group.state.withLock { $0.lookups.inTasks += 1 }
            return group.entry(for: key)
        }

        /// Answers at once, on the caller's thread.
        func entrySoon(for key: String, then: @escaping @Sendable (SharedLookup) -> Void) {
            group.state.withLock { $0.lookups.withoutTask += 1 }
            then(group.entry(for: key))
        }

        func store(_ entry: CacheEntry) { group.store(entry) }

        func remove(_ key: String) async -> Bool? { group.remove(key) }

        func expire(_ key: String, at time: Double) async -> Bool? { group.expire(key, at: time) }

        func lastGroupSync() async -> SharedSyncMark {
            group.state.withLock { state in
                guard state.available else { return .unavailable }
                return state.groupSync.map(SharedSyncMark.startedAt) ?? SharedSyncMark.none
            }
        }

        func recordGroupSync(startedAt time: Double) {
            group.state.withLock { state in
                if state.available { state.groupSync = time }
            }
        }

        func lock(_ key: String) async -> SharedLock { group.lock(key) }

        func release(_ key: String, token: String, outcome: SharedFillOutcome) {
            group.release(key, token: token, outcome: outcome)
        }

        func awaitFill(_ key: String, freshAt: Double, until deadline: Double) async -> SharedWait {
            await group.awaitFill(key, freshAt: freshAt, until: deadline)
        }

        func takeToken(ratePerSecond: Double, burst: Int, budget: String) async -> SharedToken {
            group.takeToken(ratePerSecond: ratePerSecond, burst: burst, budget: budget)
        }

        func announceBlock(for seconds: Double, budget: String) { group.announceBlock(for: seconds, budget: budget) }

        func onEvent(_ handler: @escaping @Sendable (SharedEvent) -> Void) {
            group.state.withLock { $0.handlers.append(handler) }
        }

        var status: SharedTierStatus {
            SharedTierStatus(
                location: "fake group", connected: group.isAvailable, roundTrip: 0.001, unavailable: 0,
                disconnects: 0, lastError: nil)
        }
    }

    private func entry(for key: String) -> SharedLookup {
        let now = time.now()
        return state.withLock { state -> SharedLookup in
            guard state.available else { return .unavailable }
            guard let stored = state.entries[key], stored.expires > now else { return .missing }
            return CacheEntry.restored(record: stored.record, key: key).map(SharedLookup.found) ?? .missing
        }
    }

    private func store(_ entry: CacheEntry) {
        state.withLock { state in
            guard state.available, entry.staleUntil > time.now() else { return }
            state.entries[entry.key] = (entry.record, entry.staleUntil)
        }
    }

    private func remove(_ key: String) -> Bool? {
        let (removed, handlers) = state.withLock { state -> (Bool?, [@Sendable (SharedEvent) -> Void]) in
            guard state.available else { return (nil, []) }
            return (state.entries.removeValue(forKey: key) != nil, state.handlers)
        }
        for handler in handlers { handler(.purged(key: key)) }
        return removed
    }

    /// As Redis does it: the group's copy stored again expired when fresh, then the notice to
    /// every member, the caller included.
    private func expire(_ key: String, at time: Double) -> Bool? {
        let held: Bool
        switch entry(for: key) {
        case .found(let entry):
            if entry.isFresh(at: time) { store(entry.expired(at: time)) }
            held = true
        case .missing: held = false
        case .unavailable: return nil
        }
        for handler in state.withLock({ $0.handlers }) { handler(.expired(key: key)) }
        return held
    }

    /// A member's lock lasts until released (the member lives); only a ghost's expires.
    private func lock(_ key: String) -> SharedLock {
        let action = state.withLock { state in
            defer { state.beforeNextLock = nil }
            return state.beforeNextLock
        }
        action?()
        let now = time.now()
        return state.withLock { state in
            guard state.available else { return .unavailable }
            if let held = state.locks[key], held.expires > now { return .held }
            state.nextToken += 1
            let token = "token-\(state.nextToken)"
            state.locks[key] = (token, .infinity)
            return .acquired(token: token)
        }
    }

    private func release(_ key: String, token: String, outcome: SharedFillOutcome) {
        let waiting = state.withLock { state -> [Waiter] in
            guard state.available else { return [] }
            if state.locks[key]?.token == token { state.locks[key] = nil }
            return Array((state.waiters.removeValue(forKey: key) ?? [:]).values)
        }
        for waiter in waiting {
            switch outcome {
            case .stored:
                if case .found(let entry) = entry(for: key), entry.isFresh(at: waiter.freshAt) {
                    waiter.resume(.found(entry))
                } else {
                    waiter.resume(.nothing)
                }
            case .failed(let error): waiter.resume(.failed(error))
            case .abandoned: waiter.resume(.nothing)
            }
        }
    }

    private func awaitFill(_ key: String, freshAt: Double, until deadline: Double) async -> SharedWait {
        if case .found(let entry) = entry(for: key), entry.isFresh(at: freshAt) { return .found(entry) }
        guard isAvailable else { return .unavailable }
        let id = UUID()
        return await withCheckedContinuation { continuation in
            let waiter = Waiter(freshAt: freshAt, continuation)
            state.withLock { $0.waiters[key, default: [:]][id] = waiter }
            Task { [time] in
                try? await time.sleep(until: deadline)
                self.state.withLock { _ = $0.waiters[key]?.removeValue(forKey: id) }
                waiter.resume(.nothing)
            }
        }
    }

    private func takeToken(ratePerSecond: Double, burst: Int, budget: String) -> SharedToken {
        let now = time.now()
        return state.withLock { state in
            guard state.available else { return .unavailable }
            let tat = state.tat[budget, default: 0]
            let allowed = tat - Double(burst - 1) / ratePerSecond
            if now < allowed { return .wait(seconds: allowed - now) }
            state.tat[budget] = max(tat, now) + 1 / ratePerSecond
            if budget.isEmpty { state.tokensTaken += 1 }
            return .granted
        }
    }

    private func announceBlock(for seconds: Double, budget: String) {
        let handlers = state.withLock { state -> [@Sendable (SharedEvent) -> Void] in
            guard state.available else { return [] }
            state.breaker[budget] = max(state.breaker[budget, default: 0], time.now() + seconds)
            return state.handlers
        }
        for handler in handlers { handler(.blocked(seconds: seconds, budget: budget)) }
    }
}
