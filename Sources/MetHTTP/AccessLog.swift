import Foundation
import MetEngine

/// Where the access log is written (`--access-log`), shared by every loop. Each loop buffers its
/// lines (`AccessLogBuffer`) and hands them over in batches, written under a lock (standard error's
/// own, shared with the log lines: `Logger.writeToStandardError`), so batches of two loops and
/// log lines never interleave. A batch is written on the loop that fills it, so a log that
/// cannot keep up (a stalled pipe, a full disk) slows the loops: it is the price of losing no line.
///
/// A file is reopened by `reopen()` (SIGHUP, after logrotate moved it): the new descriptor takes
/// the place of the old under the same lock, so each batch goes whole to one file or the other,
/// and none is lost.
public final class AccessLog: Sendable {
    /// How lines are written.
    public let format: LogFormat
    /// The file's path; nil for standard error.
    private let path: String?
    /// The descriptor batches are written to, replaced under the lock that keeps them whole.
    private let writing: Locked<Int32>

    /// The access log for `destination`, or nil for `.off`. A file is opened for appending
    /// (created with mode 0644 if missing); throws a message naming it when it cannot be.
    public static func open(_ destination: AccessLogDestination, format: LogFormat) throws -> AccessLog? {
        switch destination {
        case .off:
            return nil
        case .standardError:
            return AccessLog(descriptor: 2, path: nil, format: format)
        case .file(let path):
            return AccessLog(descriptor: try openForAppending(path), path: path, format: format)
        }
    }

    private static func openForAppending(_ path: String) throws(AccessLogError) -> Int32 {
        let descriptor = Glibc.open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else {
            throw AccessLogError("cannot open \(path) for appending: \(String(cString: strerror(errno)))")
        }
        return descriptor
    }

    private init(descriptor: Int32, path: String?, format: LogFormat) {
        writing = Locked(descriptor)
        self.path = path
        self.format = format
    }

    deinit {
        if path != nil { Glibc.close(writing.withLock { $0 }) }
    }

    /// Writes whole lines. Any thread; blocks while another writer holds the lock.
    func write(_ lines: [UInt8]) {
        guard path != nil else { return Logger.writeToStandardError(lines) }
        writing.withLock { descriptor in _ = Logger.writeAll(lines, to: descriptor) }
    }

    /// Opens the file at its path anew (one logrotate moved away, or created again) and writes the
    /// next batches there; the old descriptor is closed once the batch being written is whole.
    /// Returns the path reopened, nil for standard error (nothing to reopen); throws when the file
    /// cannot be opened, and then keeps writing to the one it had. Any thread.
    @discardableResult
    public func reopen() throws(AccessLogError) -> String? {
        guard let path else { return nil }
        let fresh = try Self.openForAppending(path)
        let old = writing.withLock { descriptor in
            defer { descriptor = fresh }
            return descriptor
        }
        Glibc.close(old)
        return path
    }
}

/// Why the access log could not be opened (or reopened).
public struct AccessLogError: Error, CustomStringConvertible {
    public let description: String

    init(_ description: String) { self.description = description }
}
