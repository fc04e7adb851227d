import Dispatch
import Foundation
import MetCore

/// The signals a serving process handles: SIGINT and SIGTERM drain and stop it; SIGHUP, SIGUSR1
/// and SIGUSR2, whose default action would kill it at once, are logged and ignored.
public enum ShutdownSignal {
    /// The signals `ignoreOthers` logs and ignores, with their names.
    static let ignored: [(number: Int32, name: String)] = [
        (SIGHUP, "SIGHUP"), (SIGUSR1, "SIGUSR1"), (SIGUSR2, "SIGUSR2"),
    ]

    /// Ignores the default handlers of SIGINT and SIGTERM and calls `handler` once, on a
    /// background queue, when the first of them arrives. Later signals are ignored.
    public static func onReceipt(_ handler: @escaping @Sendable (Int32) -> Void) {
        let fired = Locked(false)
        for number in [SIGINT, SIGTERM] {
            observe(number) {
                let first = fired.withLock { fired in
                    defer { fired = true }
                    return !fired
                }
                if first { handler(number) }
            }
        }
    }

    /// Ignores SIGHUP, SIGUSR1 and SIGUSR2 for the rest of the process, logging one info line
    /// naming the signal each time one arrives (on a background queue). Call before binding, so
    /// that no moment of serving can be killed by them.
    public static func ignoreOthers(logger: Logger) {
        for (number, name) in ignored {
            observe(number) { logger.info("received \(name): ignored (SIGINT or SIGTERM stops the server)") }
        }
    }

    /// Replaces `number`'s default action by `handler`, run on `queue` for each delivery.
    private static func observe(_ number: Int32, _ handler: @escaping @Sendable () -> Void) {
        signal(number, SIG_IGN)
        let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
        source.setEventHandler(handler: handler)
        source.resume()
        sources.withLock { $0.append(source) }
    }

    /// Where the handlers run: one serial queue, off the loops and the cooperative pool.
    private static let queue = DispatchQueue(label: "signals")

    /// Keeps the signal sources alive for the life of the process.
    private static let sources = Locked<[any DispatchSourceSignal]>([])
}
