/// The pacer's state, kept under its one lock: the bucket, the lanes and their turns, the timer.
extension UpstreamPacer {
    /// A place in a lane: the class and the client (nil: the server's own work).
    package struct Lane: Hashable {
        package let priority: UpstreamClaim.Priority
        package let client: String?
    }

    /// One queued call.
    package struct Waiter {
        /// Seconds since 1970; at or past it the call leaves with `.timeout`.
        package let deadline: Double
        package let continuation: CheckedContinuation<Result<Void, UpstreamError>, Never>
        /// The lanes it waits in; it starts from whichever reaches it first.
        package var lanes: [Lane]
        /// The clients it counts against (each once).
        package var clients: Set<String?> { Set(lanes.map(\.client)) }
        package var isForeground: Bool { lanes.contains { $0.priority == .foreground } }
    }

    /// One lane's calls, oldest first; calls that started or left through another lane are skipped
    /// when they reach the head.
    package struct Queue {
        package var tickets: [UInt64] = []
        package var head = 0

        package var isEmpty: Bool { head == tickets.count }

        package mutating func removeFirst() {
            head += 1
            if head == tickets.count {
                tickets.removeAll(keepingCapacity: true)
                head = 0
            } else if head >= 64, head * 2 >= tickets.count {
                tickets.removeFirst(head)
                head = 0
            }
        }
    }

    /// The one task sleeping on the clock for the queue's next time-driven event.
    package struct Timer {
        package let id: UInt64
        /// When it wakes, seconds since 1970.
        package let wake: Double
        package let task: Task<Void, Never>
    }

    package struct State {
        /// GCRA's theoretical arrival time: a call conforms at `now` when
        /// `now >= tat - (burst - 1) / ratePerSecond`. 0 means a full bucket.
        package var tat = 0.0
        package var inFlight = 0
        /// The calls waiting, by ticket.
        package var waiters: [UInt64: Waiter] = [:]
        package var queues: [Lane: Queue] = [:]
        /// Tickets in all the lanes' queues, stale ones included (see `compact`).
        package var placed = 0
        /// Per class, the clients whose lanes hold calls, in turn order, and whose turn is next.
        package var rotation: [[String?]] = [[], []]
        package var turn = [0, 0]
        /// Calls waiting per client (a call in two of its lanes counts once).
        package var waitingByClient: [String?: Int] = [:]
        package var timer: Timer?
        package var nextID: UInt64 = 0
        /// Calls that had to queue, since start-up.
        package var waits = 0
        /// Calls refused for their clients' limit, since start-up.
        package var refused = 0
    }

    /// Work decided under the lock and done after it: resuming waiters, stopping a stale timer.
    package struct Effects {
        package var resumptions:
            [(CheckedContinuation<Result<Void, UpstreamError>, Never>, Result<Void, UpstreamError>)] = []
        package var cancelledTimer: Task<Void, Never>?

        package func perform() {
            cancelledTimer?.cancel()
            for (continuation, result) in resumptions { continuation.resume(returning: result) }
        }
    }
}
