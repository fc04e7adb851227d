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
        them from the disk. With --redis, the sync is the group's: it does nothing while another
        instance syncs, asks for the changes since the group's last sync, and tells every instance
        to mark its copies of the changed records expired.
        """

    /// One run of `synchronizer`; the exit status.
    static func run(_ synchronizer: Synchronizer) async -> Int32 {
        switch await synchronizer.run() {
        case .success(let report) where report.anotherInstanceSyncing:
            print("not synced: another instance of the group is syncing")
            return 0
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
    /// successful sync (or after start-up when there was none), in a task of its own for the
    /// server's lifetime. The last sync is asked again before each run: with `--redis` it may be
    /// another instance's, and then this one waits an interval from it instead of syncing too.
    static func schedule(_ synchronizer: Synchronizer, every interval: Double, logger: Logger) {
        Task.detached {
            let began = Date().timeIntervalSince1970
            while true {
                let due = (await synchronizer.lastSync() ?? began) + interval
                let wait = due - Date().timeIntervalSince1970
                if wait > 0 {
                    logger.debug("next sync in \(Int(wait)) s")
                    try? await Task.sleep(for: .seconds(wait))
                    continue
                }
                switch await synchronizer.run() {
                case .failure:
                    // Try again in a tenth of the interval (at least a minute): the Met may be back.
                    try? await Task.sleep(for: .seconds(max(60, interval / 10)))
                case .success(let report) where report.anotherInstanceSyncing:
                    // Its end moves the group's last sync; asked again in a minute.
                    try? await Task.sleep(for: .seconds(60))
                case .success:
                    break
                }
            }
        }
    }
}
