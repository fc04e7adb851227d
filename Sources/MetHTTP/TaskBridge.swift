import EventLoops
import HTTPWire
import MetEngine

/// The bridge from one loop into Swift concurrency: a request the core could not answer on the
/// loop goes on in a task that holds only an ID; the connection never leaves the loop's thread,
/// and the response comes back through the loop's job queue to `finish`.
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
    /// Given each exchange with its response, on the loop thread, once.
    private let finish: (Exchange, Response) -> Void

    init(loop: EventLoop, finish: @escaping (Exchange, Response) -> Void) {
        self.loop = loop
        self.finish = finish
    }

    /// Runs the rest of a request in a task; returns the exchange's ID.
    func suspend(_ suspension: Suspension, connection: HTTPConnection, head: RequestHead, started: RequestStart)
        -> UInt64
    {
        nextID &+= 1
        let id = nextID
        var exchange = Exchange(connection: connection, head: head, started: started)
        exchange.task = Task {
            let response = await suspension.response()
            self.loop.execute { self.complete(id, with: response) }
        }
        pending[id] = exchange
        return id
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
