import Foundation

/// How much the server says. Ordered: each level includes the ones above it.
public enum LogLevel: Int, Sendable, Comparable, CaseIterable {
    /// Everything, including per-request internals.
    case debug
    /// Start-up, shutdown and one access-log line per request.
    case info
    /// Upstream failures and anything else that degrades answers but is expected.
    case warning
    /// Faults in the server itself.
    case error

    public static func < (lhs: LogLevel, rhs: LogLevel) -> Bool { lhs.rawValue < rhs.rawValue }

    /// The name used by `--log-level` and in log lines.
    public var name: String {
        switch self {
        case .debug: "debug"
        case .info: "info"
        case .warning: "warning"
        case .error: "error"
        }
    }

    /// Parses a `--log-level` value; nil for anything else.
    public init?(name: String) {
        guard let level = LogLevel.allCases.first(where: { $0.name == name.lowercased() }) else { return nil }
        self = level
    }
}

/// A level-gated logger. Messages are built only when their level is enabled, formatted as
/// `format` says, and go to a sink (standard error by default; tests pass an in-memory one).
/// Safe from any thread.
public struct Logger: Sendable {
    /// Receives one finished line, without its trailing newline.
    public typealias Sink = @Sendable (String) -> Void

    /// The lowest level that is written.
    public let level: LogLevel
    /// How lines are written.
    public let format: LogFormat
    private let sink: Sink
    private let clock: @Sendable () -> Double

    /// - Parameters:
    ///   - format: `.bare` (the default) writes `level: message`, without a time.
    ///   - clock: seconds since 1970, for the lines' time (the system clock by default).
    public init(
        level: LogLevel, format: LogFormat = .bare, sink: @escaping Sink = Logger.standardError,
        clock: @escaping @Sendable () -> Double = { SystemTime().now() }
    ) {
        self.level = level
        self.format = format
        self.sink = sink
        self.clock = clock
    }

    /// Writes a line to standard error (see `writeToStandardError`).
    public static let standardError: Sink = { line in
        var bytes = Array(line.utf8)
        bytes.append(0x0A)
        writeToStandardError(bytes)
    }

    /// Every write of this process to standard error, log lines and access-log batches alike,
    /// goes through this lock: on a pipe only writes of up to 4 KiB are atomic, and a batch is
    /// larger, so without it a warning could land inside an access line.
    /// It counts the writes, so that it guards a value of its own (a lock around nothing is
    /// invisible to ThreadSanitizer's Swift access checks, which then report the empty value).
    private static let standardErrorWrites = Locked(0)

    /// Writes whole lines to standard error, one writer at a time. Any thread.
    public static func writeToStandardError(_ bytes: [UInt8]) {
        standardErrorWrites.withLock { writes in
            writeAll(bytes, to: 2)
            writes &+= 1
        }
    }

    /// Writes every byte of `bytes` to `descriptor`, carrying on after short writes and EINTR;
    /// gives up on any other error (a log must never stop the server). Returns whether all were
    /// written.
    @discardableResult
    public static func writeAll(_ bytes: [UInt8], to descriptor: Int32) -> Bool {
        bytes.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
                if written < 0 && errno == EINTR { continue }
                if written <= 0 { return false }
                offset += written
            }
            return true
        }
    }

    /// Whether a message at `level` would be written; check it before doing costly work for a log line.
    @inline(__always)
    public func isEnabled(_ level: LogLevel) -> Bool { level >= self.level }

    /// Writes `message` at `level`; the autoclosure runs only when the level is enabled.
    public func log(_ level: LogLevel, _ message: @autoclosure () -> String) {
        guard isEnabled(level) else { return }
        switch format {
        case .bare:
            sink("\(level.name): \(message())")
        case .text:
            sink("\(Timestamp.rfc3339(clock())) \(level.name): \(message())")
        case .json:
            var json = JSONWriter()
            json.beginObject()
            json.member("time", string: Timestamp.rfc3339(clock()))
            json.member("level", string: level.name)
            json.member("message", string: message())
            json.endObject()
            sink(String(decoding: json.bytes, as: UTF8.self))
        }
    }

    public func debug(_ message: @autoclosure () -> String) { log(.debug, message()) }
    public func info(_ message: @autoclosure () -> String) { log(.info, message()) }
    public func warning(_ message: @autoclosure () -> String) { log(.warning, message()) }
    public func error(_ message: @autoclosure () -> String) { log(.error, message()) }
}
