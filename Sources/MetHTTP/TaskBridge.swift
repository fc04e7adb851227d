import EventLoops
import HTTPWire
import MetEngine

/// The bridge from one loop into Swift concurrency: a request the core could not answer on the
/// loop goes on in a task (or in a reply's handler) that holds only an ID; the connection never
/// leaves the loop's thread, and the response comes back through the loop's job queue to `finish`.
///
/// Loop thread only (the tasks touch nothing but the loop's `execute`).
final class TaskBridge: @unchecked Sendable {
    /// A request the core answers asynchronously.
    struct Exchange {
        let connection: HTTPConnection
        let head: RequestHead
        let started: RequestStart
        var task: Task<Void, Never>?
        /// The client left; the answer goes nowhere (logged as 499).
        var clientGone = false
    }

    private let loop: EventLoop
    private var pending: [UInt64: Exchange] = [:]
    private var nextID: UInt64 = 0
    /// The exchange whose wait is being begun (`suspend`), while it is.
    private var starting: UInt64?
    /// Given each exchange with its response, on the loop thread, once.
    private let finish: (Exchange, Response) -> Void

    init(loop: EventLoop, finish: @escaping (Exchange, Response) -> Void) {
        self.loop = loop
        self.finish = finish
    }

    /// Runs the rest of a request: in a task, or, for a suspension that awaits a reply, from the
    /// reply's handler (then in a task only if the reply did not do). Returns the exchange's ID.
    func suspend(_ suspension: Suspension, connection: HTTPConnection, head: RequestHead, started: RequestStart)
        -> UInt64
    {
        nextID &+= 1
        let id = nextID
        // Before the wait begins: its handler may be told at once.
        pending[id] = Exchange(connection: connection, head: head, started: started)
        guard let start = suspension.start else {
            run(suspension, id)
            return id
        }
        starting = id
        start { answer in
            // On this loop after the wait began (a reply read here): at once. During `start`
            // (before the caller has the ID) or on another thread: through the job queue.
            if self.loop.isCurrent, self.starting != id {
                self.resume(id, answer)
            } else {
                self.loop.execute { self.resume(id, answer) }
            }
        }
        starting = nil
        return id
    }

    /// Runs `suspension` for exchange `id` in a task.
    private func run(_ suspension: Suspension, _ id: UInt64) {
        let task = Task {
            let response = await suspension.response()
            self.loop.execute { self.complete(id, with: response) }
        }
        pending[id]?.task = task
        if pending[id]?.clientGone == true { task.cancel() }
    }

    /// What the reply that exchange `id` awaited came to: its response, or the rest in a task.
    private func resume(_ id: UInt64, _ answer: Answer) {
        switch answer {
        case .ready(let response): complete(id, with: response)
        case .suspended(let rest): if pending[id] != nil { run(rest, id) }
        }
    }

    private func complete(_ id: UInt64, with response: Response) {
        guard let exchange = pending.removeValue(forKey: id) else { return }
        finish(exchange, response)
    }

    /// The client of exchange `id` hung up: its task is cancelled (a shared upstream fetch goes on
    /// while others wait for it).
    func clientLeft(_ id: UInt64) {
        pending[id]?.clientGone = true
        pending[id]?.task?.cancel()
    }

    /// Cancels every task still running and hands back their exchanges, which will not be finished.
    func abandonAll() -> [Exchange] {
        let abandoned = Array(pending.values)
        pending = [:]
        for exchange in abandoned { exchange.task?.cancel() }
        return abandoned
    }
}
