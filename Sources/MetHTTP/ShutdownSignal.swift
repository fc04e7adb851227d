import Dispatch
import Foundation
import MetCore

/// Waits for SIGINT or SIGTERM.
public enum ShutdownSignal {
    /// Ignores the default handlers of SIGINT and SIGTERM and calls `handler` once, on a
    /// background queue, when the first of them arrives. Later signals are ignored.
    public static func onReceipt(_ handler: @escaping @Sendable (Int32) -> Void) {
        let queue = DispatchQueue(label: "shutdown-signal")
        let fired = Locked(false)
        for number in [SIGINT, SIGTERM] {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            source.setEventHandler {
                let first = fired.withLock { fired in
                    defer { fired = true }
                    return !fired
                }
                if first { handler(number) }
            }
            source.resume()
            sources.withLock { $0.append(source) }
        }
    }

    /// Keeps the signal sources alive for the life of the process.
    private static let sources = Locked<[any DispatchSourceSignal]>([])
}
