import Foundation
import MetEngine

/// `GET /cache/snapshot`, once the router has let the client (as for a purge): a snapshot of the
/// persistent tier, as `themet export` writes it, made for this request into a file beside the
/// cache, opened, unlinked at once (the open descriptor keeps it until the body is sent, and
/// nothing is left behind if the server stops), and sent with `sendfile` from the file, not from
/// memory. One is made at a time, on a thread of its own; other requests wait their turn. Any
/// thread.
struct SnapshotHandler: Sendable {
    let disk: (any PersistentTier)?
    /// The data directory: where the file is made, and whose `sync.json` the manifest names.
    let directory: String
    let time: any TimeSource
    let logger: Logger
    /// One snapshot at a time (each copies the whole tier), each on a thread of its own.
    private let gate = BlockingGate(limit: 1)

    init(disk: (any PersistentTier)?, directory: String, time: any TimeSource, logger: Logger) {
        self.disk = disk
        self.directory = directory
        self.time = time
        self.logger = logger
    }

    /// The snapshot's response (200 with `application/vnd.sqlite3`), with the pictures when
    /// `pictures`, or a problem: 404 `no_persistent_cache` without a tier, 500 when it could not
    /// be made.
    func snapshot(pictures: Bool) -> Answer {
        guard let disk else {
            return .ready(
                Problem(
                    .noPersistentCache,
                    "This server keeps no persistent cache (--disk-cache-size 0, or its file could not be opened): "
                        + "there is nothing to make a snapshot of."
                ).response)
        }
        return .suspended(
            Suspension { [self] in
                let now = time.now()
                let made = await gate.run { [self] in make(from: disk, pictures: pictures, at: now) }
                switch made {
                case .success(let (file, length, held)):
                    var response = Response(
                        status: 200,
                        headers: [
                            "Content-Type": "application/vnd.sqlite3",
                            "Content-Disposition":
                                "attachment; filename=\"themet-\(Synchronizer.day(of: now)).snapshot\"",
                            "Cache-Control": "no-store",
                        ])
                    response.fileBody = FileBody(file: file, length: length)
                    logger.info(
                        "snapshot: \(held.records) records"
                            + (pictures ? ", \(held.pictures) pictures" : "")
                            + ", \(length) bytes, sent from \(directory)")
                    return response
                case .failure(let reason):
                    logger.warning("snapshot: cannot make one in \(directory): \(reason)")
                    return Problem(.internalError, "The snapshot could not be made: \(reason)").response
                }
            })
    }

    /// Makes the snapshot file, opens it and unlinks it: the open file, its length and what it
    /// holds, or why it failed. Blocking: on the gate's thread.
    private func make(from disk: any PersistentTier, pictures: Bool, at now: Double) -> Result<
        (OpenFile, Int, (records: Int, pictures: Int)), SnapshotFailure
    > {
        let path = directory + "/snapshot-\(UUID().uuidString)"
        defer { unlink(path) }
        let held: (records: Int, pictures: Int)
        do {
            held = try disk.writeSnapshot(
                to: path, createdBy: "themet \(MetService.version)",
                syncStartedAt: SyncState(directory: directory, logger: logger).load(), pictures: pictures, at: now)
        } catch {
            return .failure(SnapshotFailure(reason: "\(error)"))
        }
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return .failure(SnapshotFailure(reason: String(cString: strerror(errno)))) }
        let file = OpenFile(descriptor: descriptor)
        var status = stat()
        guard fstat(descriptor, &status) == 0 else {
            return .failure(SnapshotFailure(reason: String(cString: strerror(errno))))
        }
        return .success((file, Int(status.st_size), held))
    }

    /// Why a snapshot could not be made, in words.
    private struct SnapshotFailure: Error, CustomStringConvertible {
        let reason: String
        var description: String { reason }
    }
}
