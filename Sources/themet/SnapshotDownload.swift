import Foundation
import MetCore
import MetEngine
import MetUpstream

/// `themet import URL`: the snapshot at an `http(s)://` URL (a running server's
/// `GET /cache/snapshot`) downloaded into a file beside the cache, which the import then checks
/// and reads as it does a local file, and which is removed afterwards whatever happens.
///
/// The file is written as it comes, never held in memory, within the free space of the data
/// directory's file system less a twentieth of it (at least 64 MiB kept free), and the download
/// within `timeout`. `--admin-token`, when given, is sent as the bearer token the server asks of
/// whoever takes a snapshot. An answer other than 200 is refused with the server's own detail.
enum SnapshotDownload {
    /// Seconds the whole download may take: a snapshot of the whole collection (2 GB) over a slow
    /// LAN fits.
    static let timeout = 3_600.0

    /// Whether `source` names a URL to download rather than a file.
    static func isURL(_ source: String) -> Bool {
        let lowered = source.lowercased()
        return lowered.hasPrefix("http://") || lowered.hasPrefix("https://")
    }

    /// Downloads `url` into a new file in `directory`: its path (the caller removes it), or why not.
    static func fetch(_ url: String, into directory: String, configuration: ServerConfiguration) async -> Result<
        String, DownloadFailure
    > {
        let limit = room(in: directory)
        guard limit > 0 else {
            return .failure(DownloadFailure("\(directory) has no room for a snapshot (less than 64 MiB free)"))
        }
        let path = directory + "/snapshot-download-\(UUID().uuidString)"
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            return .failure(DownloadFailure("cannot make \(path): \(String(cString: strerror(errno)))"))
        }
        defer { close(descriptor) }
        let progress = Task { await report(descriptor) }
        defer { progress.cancel() }
        let headers = configuration.access.adminToken.map { ["Authorization: Bearer \($0)"] } ?? []
        let download: CurlDownload
        do {
            download = try CurlDownload(
                connectTimeout: configuration.upstream.connectTimeout, timeout: timeout, maxBytes: limit,
                accept: "application/vnd.sqlite3")
        } catch {
            unlink(path)
            return .failure(DownloadFailure("cannot download \(url): \(error)"))
        }
        do {
            let reply = try await download.fetch(url, headers: headers, into: descriptor)
            guard reply.status == 200 else {
                unlink(path)
                return .failure(DownloadFailure("\(url) answered \(reply.status)\(detail(of: reply))"))
            }
            guard fsync(descriptor) == 0 else {
                let reason = String(cString: strerror(errno))
                unlink(path)
                return .failure(DownloadFailure("cannot write \(path): \(reason)"))
            }
            return .success(path)
        } catch {
            unlink(path)
            return .failure(DownloadFailure("cannot download \(url): \(error.logDescription)"))
        }
    }

    /// Why a download failed, in words.
    struct DownloadFailure: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    /// The bytes a download may take in `directory`'s file system: what is free less a twentieth
    /// of the whole (at least 64 MiB); 0 or less when there is no room, or it cannot be told.
    private static func room(in directory: String) -> Int {
        var figures = statvfs()
        guard statvfs(directory, &figures) == 0 else { return 0 }
        let block = Int(figures.f_frsize)
        let kept = max(Int(figures.f_blocks) * block / 20, 64 << 20)
        return Int(figures.f_bavail) * block - kept
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
