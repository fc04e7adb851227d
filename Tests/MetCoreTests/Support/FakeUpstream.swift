@testable import MetCore
@testable import MetEngine

/// An in-memory upstream: answers each `path?query` from a table, records every call, and can
/// hold its answers until the test releases them, so concurrency is tested deterministically
/// (continuations, never sleeps). A held call that is cancelled throws `.cancelled` and is
/// recorded in `cancellations`.
final class FakeUpstream: Upstream {
    /// What the fake does for one key.
    enum Answer: Sendable {
        /// Answers with this HTTP reply.
        case reply(UpstreamReply)
        /// Fails as a transport would (unreachable, timeout).
        case failure(UpstreamError)
    }

    private typealias Waiter = (count: Int, continuation: CheckedContinuation<Void, Never>)

    private struct State {
        var answers: [String: Answer]
        /// Answers given in turn, before `answers`: each call takes the first; the last stays.
        var scripts: [String: [Answer]] = [:]
        var calls: [String] = []
        /// The validators each call sent (nil for an unconditional one), in the order of `calls`.
        var conditions: [UpstreamValidators?] = []
        var cancellations: [String] = []
        var isHolding = false
        var held: [Int: CheckedContinuation<Bool, Never>] = [:]
        var callWaiters: [Waiter] = []
        var cancellationWaiters: [Waiter] = []
    }

    private let state: Locked<State>

    /// - Parameter answers: keyed by `MetResource.cacheKey` form: path, then `?name=value&…`.
    init(_ answers: [String: Answer] = [:]) {
        state = Locked(State(answers: answers))
    }

    var location: String { "fake upstream" }

    /// The table key for a call: the target a real upstream would be sent.
    static func key(path: String, query: [RequestTarget.QueryItem]) -> String {
        UpstreamTarget.encode(path: path, query: query)
    }

    /// Sets (or replaces) the answer for `resource`.
    func answer(_ resource: MetResource, with answer: Answer) {
        state.withLock { $0.answers[resource.cacheKey] = answer }
    }

    /// Answers the calls for `resource` with `answers` in turn (the last one repeats), e.g. a
    /// 503 and then the record, to test retries.
    func answer(_ resource: MetResource, withEach answers: [Answer]) {
        precondition(!answers.isEmpty, "a script needs at least one answer")
        state.withLock { $0.scripts[resource.cacheKey] = answers }
    }

    /// Sets (or replaces) the answer for the image host's `path` (a picture's cache key).
    func answer(path: String, with answer: Answer) {
        state.withLock { $0.answers[path] = answer }
    }

    /// Answers the calls for the image host's `path` with `answers` in turn (the last repeats).
    func answer(path: String, withEach answers: [Answer]) {
        precondition(!answers.isEmpty, "a script needs at least one answer")
        state.withLock { $0.scripts[path] = answers }
    }

    /// The validators each call sent (nil for an unconditional one), in arrival order.
    var conditions: [UpstreamValidators?] { state.withLock { $0.conditions } }

    /// Every call so far, as table keys, in arrival order (held and cancelled calls included).
    var calls: [String] { state.withLock { $0.calls } }

    /// Calls made for `resource`.
    func callCount(for resource: MetResource) -> Int {
        let key = resource.cacheKey
        return state.withLock { $0.calls.filter { $0 == key }.count }
    }

    /// Calls that were cancelled while held, as table keys.
    var cancellations: [String] { state.withLock { $0.cancellations } }

    /// From now on, calls wait until `release()`.
    func hold() {
        state.withLock { $0.isHolding = true }
    }

    /// Stops holding and lets every held call answer (from the table as it is now).
    func release() {
        let held = state.withLock { state -> [CheckedContinuation<Bool, Never>] in
            state.isHolding = false
            defer { state.held = [:] }
            return Array(state.held.values)
        }
        for call in held { call.resume(returning: true) }
    }

    /// Returns once at least `count` calls have arrived.
    func waitForCalls(_ count: Int) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let ready = state.withLock { state -> Bool in
                if state.calls.count >= count { return true }
                state.callWaiters.append((count, continuation))
                return false
            }
            if ready { continuation.resume() }
        }
    }

    /// Returns once at least `count` held calls have been cancelled.
    func waitForCancellations(_ count: Int) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let ready = state.withLock { state -> Bool in
                if state.cancellations.count >= count { return true }
                state.cancellationWaiters.append((count, continuation))
                return false
            }
            if ready { continuation.resume() }
        }
    }

    func get(
        path: String, query: [RequestTarget.QueryItem], conditions: UpstreamValidators?
    ) async throws(UpstreamError) -> UpstreamReply {
        let key = Self.key(path: path, query: query)
        let (id, arrived) = state.withLock { state -> (Int, [Waiter]) in
            state.calls.append(key)
            state.conditions.append(conditions)
            let count = state.calls.count
            let ready = state.callWaiters.filter { $0.count <= count }
            state.callWaiters.removeAll { $0.count <= count }
            return (count, ready)
        }
        for waiter in arrived { waiter.continuation.resume() }

        let released = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
                let immediate = state.withLock { state -> Bool? in
                    if Task.isCancelled { return false }
                    if !state.isHolding { return true }
                    state.held[id] = continuation
                    return nil
                }
                if let immediate { continuation.resume(returning: immediate) }
            }
        } onCancel: { [state] in
            let continuation = state.withLock { $0.held.removeValue(forKey: id) }
            continuation?.resume(returning: false)
        }

        guard released else {
            let noticed = state.withLock { state -> [Waiter] in
                state.cancellations.append(key)
                let count = state.cancellations.count
                let ready = state.cancellationWaiters.filter { $0.count <= count }
                state.cancellationWaiters.removeAll { $0.count <= count }
                return ready
            }
            for waiter in noticed { waiter.continuation.resume() }
            throw .cancelled
        }
        let answer = state.withLock { state -> Answer? in
            guard var script = state.scripts[key], let first = script.first else { return state.answers[key] }
            if script.count > 1 {
                script.removeFirst()
                state.scripts[key] = script
            }
            return first
        }
        switch answer {
        case .reply(let reply): return reply
        case .failure(let error): throw error
        case nil: throw .unreachable("the fake upstream has no answer for \(key)")
        }
    }
}

extension FakeUpstream.Answer {
    /// A JSON reply with the Met's content type.
    static func json(_ text: String, status: Int = 200) -> Self {
        .reply(UpstreamReply(status: status, contentType: "application/json; charset=UTF-8", body: Array(text.utf8)))
    }

    /// The Met's 404 for an object, with one of its two messages.
    static func notFound(_ message: String = "ObjectID not found") -> Self {
        .json(#"{"message":"\#(message)"}"#, status: 404)
    }

    /// The firewall's block page: 403 with HTML (docs/MET-API.md §6).
    static let blockPage = Self.reply(
        UpstreamReply(
            status: 403, contentType: "text/html",
            body: Array("<html><body>Request unsuccessful. Incapsula incident ID: 0-12345</body></html>".utf8)))

    /// An HTML error page with `status` (what a CDN sends for a 5xx).
    static func errorPage(_ status: Int) -> Self {
        .reply(UpstreamReply(status: status, contentType: "text/html", body: Array("<html>\(status)</html>".utf8)))
    }
}
