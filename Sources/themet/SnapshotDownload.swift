import Foundation
import MetCore
import MetEngine
import MetUpstream

/// `themet import URL`: the snapshot at an `http(s)://` URL (a running server's
/// `GET /cache/snapshot`) downloaded into a file beside the cache, which the import then checks
/// and reads as it does a local file, and which is removed afterwards whatever happens.
///
/// The file is written as it comes, never held in memory, within half the free space of the data
/// directory's file system less a twentieth of it (at least 64 MiB kept free): the import writes
/// about as much again. The download ends after `timeout`, or after `stallTimeout` at less than
/// 1 KiB a second. `--admin-token`, when given, is sent as the bearer token the server asks of
/// whoever takes a snapshot. An answer other than 200 is refused with the server's own detail.
/// The file is locked while it is used: one that a killed import left behind is removed by the
/// next import into the directory.
enum SnapshotDownload {
    /// Seconds the whole download may take: a snapshot of the whole collection (2 GB) over a slow
    /// LAN fits.
    static let timeout = 3_600.0
    /// Seconds a download may go on at less than 1 KiB a second.
    static let stallTimeout = 30

    /// The download's file name in the data directory, before its random part.
    private static let prefix = "snapshot-download-"

    /// Downloads `url` into a new file in `directory`: its path (the caller removes it), or why not.
    static func fetch(_ url: String, into directory: String, configuration: ServerConfiguration) async -> Result<
        String, DownloadFailure
    > {
        removeLeftovers(in: directory)
        let limit = room(in: directory)
        guard limit > 0 else {
            return .failure(DownloadFailure("\(directory) has no room for a snapshot (less than 64 MiB free)"))
        }
        let path = directory + "/\(prefix)\(UUID().uuidString)"
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            return .failure(DownloadFailure("cannot make \(path): \(String(cString: strerror(errno)))"))
        }
        // Held until the process ends (the descriptor stays open through the import): the mark of
        // a file in use.
        _ = flock(descriptor, LOCK_EX | LOCK_NB)
        let progress = Task { await report(descriptor) }
        let result = await download(url, into: descriptor, at: path, limit: limit, configuration: configuration)
        progress.cancel()
        await progress.value
        if case .failure = result {
            unlink(path)
            close(descriptor)
        }
        return result
    }

    /// The download itself: `path` (open as `descriptor`) once it holds a 200's body, or why not.
    private static func download(
        _ url: String, into descriptor: Int32, at path: String, limit: Int, configuration: ServerConfiguration
    ) async -> Result<String, DownloadFailure> {
        let headers = configuration.access.adminToken.map { ["Authorization: Bearer \($0)"] } ?? []
        let reply: UpstreamReply
        do {
            let download = try CurlDownload(
                connectTimeout: configuration.upstream.connectTimeout, timeout: timeout, stallTimeout: stallTimeout,
                maxBytes: limit, accept: "application/vnd.sqlite3")
            reply = try await download.fetch(url, headers: headers, into: descriptor)
        } catch let error as UpstreamError {
            return .failure(DownloadFailure("cannot download \(url): \(error.logDescription)"))
        } catch {
            return .failure(DownloadFailure("cannot download \(url): \(error)"))
        }
        guard reply.status == 200 else {
            return .failure(DownloadFailure("\(url) answered \(reply.status)\(detail(of: reply))"))
        }
        guard fsync(descriptor) == 0 else {
            return .failure(DownloadFailure("cannot write \(path): \(String(cString: strerror(errno)))"))
        }
        return .success(path)
    }

    /// Why a download failed, in words.
    struct DownloadFailure: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    /// Removes the downloads in `directory` that no process holds (an import killed, or stopped
    /// by a signal, before it could remove its own).
    private static func removeLeftovers(in directory: String) {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        for name in names where name.hasPrefix(prefix) {
            let path = directory + "/" + name
            let descriptor = open(path, O_RDONLY | O_CLOEXEC)
            guard descriptor >= 0 else { continue }
            if flock(descriptor, LOCK_EX | LOCK_NB) == 0 { unlink(path) }
            close(descriptor)
        }
    }

    /// The bytes a download may take in `directory`'s file system: half of what is free less a
    /// twentieth of the whole (at least 64 MiB); 0 or less when there is no room, or it cannot be
    /// told.
    private static func room(in directory: String) -> Int {
        var figures = statvfs()
        guard statvfs(directory, &figures) == 0 else { return 0 }
        let block = Int(figures.f_frsize)
        let kept = max(Int(figures.f_blocks) * block / 20, 64 << 20)
        return (Int(figures.f_bavail) * block - kept) / 2
    }

    /// `: detail` of a problem document (or the first line of another text), when the answer has one.
    private static func detail(of reply: UpstreamReply) -> String {
        if let json = try? JSONSerialization.jsonObject(with: Data(reply.body)) as? [String: Any],
            let detail = json["detail"] as? String
        {
            return ": \(detail)"
        }
        guard reply.contentType?.hasPrefix("text/plain") == true,
            let line = String(decoding: reply.body.prefix(200), as: UTF8.self).split(separator: "\n").first
        else { return "" }
        return ": \(line)"
    }

    /// A progress line on standard error while a terminal shows it: the bytes downloaded, every
    /// quarter second, until cancelled.
    private static func report(_ descriptor: Int32) async {
        guard isatty(2) != 0 else { return }
        defer { FileHandle.standardError.write(Data("\n".utf8)) }
        while !Task.isCancelled {
            var status = stat()
            if fstat(descriptor, &status) == 0 {
                let text = String(format: "\rdownloading %.1f MiB", Double(status.st_size) / 1_048_576)
                FileHandle.standardError.write(Data(text.utf8))
            }
            try? await Task.sleep(for: .milliseconds(250))
        }
    }
}
