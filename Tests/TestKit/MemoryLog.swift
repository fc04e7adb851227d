import MetEngine

/// A log sink that keeps every line in memory, so tests can read what was logged.
public final class MemoryLog: Sendable {
    private let storage = Locked<[String]>([])

    public init() {}

    /// The lines written so far, oldest first, each as `level: message`.
    public var lines: [String] { storage.withLock { $0 } }

    /// The sink to hand to `Logger`.
    public var sink: Logger.Sink {
        { [storage] line in storage.withLock { $0.append(line) } }
    }

    /// A logger at `level` that writes here.
    public func logger(level: LogLevel = .debug) -> Logger {
        Logger(level: level, sink: sink)
    }
}
