import EventLoops
import Foundation
import MetEngine

/// The signals a serving process handles: SIGINT and SIGTERM drain and stop it; SIGHUP reopens the
/// access log; SIGUSR1 and SIGUSR2, whose default action would kill it at once, are logged and
/// ignored.
public enum ShutdownSignal {
    /// The signals `ignoreOthers` logs and ignores, with their names.
    static let ignored: [(number: Int32, name: String)] = [(SIGUSR1, "SIGUSR1"), (SIGUSR2, "SIGUSR2")]

    /// Replaces the default actions of SIGINT and SIGTERM and calls `handler` once, on a
    /// background queue, when the first of them arrives; later ones are ignored. Returns once both
    /// are caught (see `SignalWatch`): call it before announcing an address.
    public static func onReceipt(_ handler: @escaping @Sendable (Int32) -> Void) throws(EventLoopError) {
        let fired = Locked(false)
        for number in [SIGINT, SIGTERM] {
            try SignalWatch.observe(number) {
                let first = fired.withLock { fired in
                    defer { fired = true }
                    return !fired
                }
                if first { handler(number) }
            }
        }
    }

    /// Ignores SIGUSR1 and SIGUSR2 for the rest of the process, logging one info line naming the
    /// signal each time one arrives, and reopens `accessLog` on each SIGHUP (logrotate's signal),
    /// saying so (on a background queue). Call before binding, so that no moment of serving can be
    /// killed by them.
    public static func ignoreOthers(logger: Logger, accessLog: AccessLog?) throws(EventLoopError) {
        for (number, name) in ignored {
            try SignalWatch.observe(number) {
                logger.info("received \(name): ignored (SIGINT or SIGTERM stops the server)")
            }
        }
        try SignalWatch.observe(SIGHUP) {
            do {
                if let path = try accessLog?.reopen() {
                    logger.info("received SIGHUP: reopened the access log \(path)")
                } else {
                    logger.info("received SIGHUP: no access log file to reopen (SIGINT or SIGTERM stops the server)")
                }
            } catch {
                logger.warning("received SIGHUP: \(error); the access log goes on to the file it had open")
            }
        }
    }
}
