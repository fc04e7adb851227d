@testable import MetCore

/// A log sink that keeps every line in memory, so tests can read what was logged.
final class MemoryLog: Sendable {
    private let storage = Locked<[String]>([])

    /// The lines written so far, oldest first, each as `level: message`.
    var lines: [String] { storage.withLock { $0 } }

    /// The sink to hand to `Logger`.
    var sink: Logger.Sink {
        { [storage] line in storage.withLock { $0.append(line) } }
    }

    /// A logger at `level` that writes here.
    func logger(level: LogLevel = .debug) -> Logger {
        Logger(level: level, sink: sink)
    }
}
