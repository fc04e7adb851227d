import Foundation
import MetCore
import MetEngine

/// `themet sync` (one sync, then exit) and the server's periodic sync (`--sync-interval`).
enum SyncCommand {
    static let usage = """
        usage: themet sync [server options]

        Asks the Met which records changed since the last successful sync (at most --object-ttl
        back), marks the cached ones expired in memory and in the persistent cache of --data-dir,
        and refreshes them through the pacer, most recently used first. Prints a summary; exits 0,
        or 1 when the Met's list of changes could not be had. A running server on the same data
        directory keeps its own memory: it sees the new records once its copies expire or it reads
        them from the disk.
        """

    /// One run of `synchronizer`; the exit status.
    static func run(_ synchronizer: Synchronizer) async -> Int32 {
        switch await synchronizer.run() {
        case .success(let report):
            print(
                "synced changes since \(report.since): \(report.listed) changed at the Met, \(report.cached) cached, "
                    + "\(report.refreshed) refreshed, \(report.failed) failed")
            return report.failed == 0 ? 0 : 1
        case .failure(let error):
            FileHandle.standardError.write(Data("themet: sync failed: \(error.logDescription)\n".utf8))
            return 1
        }
    }

    /// Runs `synchronizer` every `interval` seconds, the first one interval after the last
    /// successful sync (or after now when there was none), in a task of its own for the server's
    /// lifetime.
    static func schedule(_ synchronizer: Synchronizer, every interval: Double, logger: Logger) {
        Task.detached {
            var due = (synchronizer.lastSync ?? Date().timeIntervalSince1970) + interval
            while true {
                let wait = max(0, due - Date().timeIntervalSince1970)
                try? await Task.sleep(for: .seconds(wait))
                if case .failure = await synchronizer.run() {
                    // Try again in a tenth of the interval (at least a minute): the Met may be back.
                    due = Date().timeIntervalSince1970 + max(60, interval / 10)
                } else {
                    due = Date().timeIntervalSince1970 + interval
                }
                logger.debug("next sync in \(Int(due - Date().timeIntervalSince1970)) s")
            }
        }
    }
}
