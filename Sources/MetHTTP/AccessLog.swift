import Foundation
import MetEngine

/// Where the access log is written (`--access-log`), shared by every loop. Each loop buffers its
/// lines (`AccessLogBuffer`) and hands them over in batches, written under a lock (standard error's
/// own, shared with the log lines: `Logger.writeToStandardError`), so batches of two loops and
/// log lines never interleave. A batch is written on the loop that fills it, so a log that
/// cannot keep up (a stalled pipe, a full disk) slows the loops: it is the price of losing no line.
public final class AccessLog: Sendable {
    /// How lines are written.
    public let format: LogFormat
    private let descriptor: Int32
    private let ownsDescriptor: Bool
    /// Batches written to the file, under the lock that keeps them whole.
    private let writing = Locked(0)

    /// The access log for `destination`, or nil for `.off`. A file is opened for appending
    /// (created with mode 0644 if missing); throws a message naming it when it cannot be.
    public static func open(_ destination: AccessLogDestination, format: LogFormat) throws -> AccessLog? {
        switch destination {
        case .off:
            return nil
        case .standardError:
            return AccessLog(descriptor: 2, owns: false, format: format)
        case .file(let path):
            let descriptor = Glibc.open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o644)
            guard descriptor >= 0 else {
                throw AccessLogError("cannot open \(path) for appending: \(String(cString: strerror(errno)))")
            }
            return AccessLog(descriptor: descriptor, owns: true, format: format)
        }
    }

    private init(descriptor: Int32, owns: Bool, format: LogFormat) {
        self.descriptor = descriptor
        self.ownsDescriptor = owns
        self.format = format
    }

    deinit {
        if ownsDescriptor { Glibc.close(descriptor) }
    }

    /// Writes whole lines. Any thread; blocks while another writer holds the lock.
    func write(_ lines: [UInt8]) {
        if descriptor == 2 && !ownsDescriptor {
            Logger.writeToStandardError(lines)
        } else {
            writing.withLock { batches in
                Logger.writeAll(lines, to: descriptor)
                batches &+= 1
            }
        }
    }
}

/// Why the access log could not be opened.
public struct AccessLogError: Error, CustomStringConvertible {
    public let description: String

    init(_ description: String) { self.description = description }
}
