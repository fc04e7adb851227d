import Foundation
import MetCore
import MetDisk
import MetEngine

/// `themet export FILE` and `themet import FILE`: a snapshot of the records cached in --data-dir,
/// and a snapshot merged into one (`CacheSnapshot`), with a progress line on a terminal.
enum SnapshotCommands {
    static let exportUsage = """
        usage: themet export FILE [--images] [server flags]

        Writes a snapshot of the records cached in --data-dir (cache.sqlite: objects, ID lists,
        departments, remembered 404s) to FILE, one SQLite file with a manifest (format, counts,
        time, a digest of its rows, the last metadataDate sync). It is consistent while a server
        runs on the directory; rows whose record does not verify are left out. FILE appears whole
        or not at all. With --images it also holds the picture files (images/ in --data-dir), each
        with its record, counted apart in the manifest; a picture whose file does not hold the
        bytes it was stored with (replaced or evicted meanwhile) is left out. Exit status: 0, 1
        when it could not be made, 64 for bad arguments.
        """

    static let importUsage = """
        usage: themet import FILE|URL [server flags]

        Merges the snapshot FILE (made by themet export), or the one at an http(s) URL (a running
        server's /cache/snapshot, downloaded beside the cache first, with --admin-token as the
        bearer token when given, and removed after), into the cache of --data-dir: every
        record whose key the directory does not hold as new or newer is stored, within
        --disk-cache-size (past it, the least recently used go, as ever). The whole file is checked
        first: a file that is not a TheMet snapshot, or is truncated or damaged (a page, a record,
        the manifest's count or digest), is refused with the reason and nothing changes. The
        directory's last sync becomes the older of its own and the snapshot's, so that the next
        metadataDate sync covers the imported records. A snapshot's pictures go to the picture
        files within --image-cache-size (none when it is 0), each checked first as a picture from
        the Met's image host is (--image-max-bytes, --image-max-pixels, its type and size): one
        that is not admitted is left out and counted. Stop a server on the directory first, or
        restart it after: a running server keeps what it holds in memory. Exit status: 0, 1 when
        the file was refused or the import failed, 64 for bad arguments.
        """

    /// The snapshot file named first in `arguments`, whether `--images` is among the rest (export
    /// only), and the server flags after it. Throws a usage error's text.
    static func parse(_ arguments: [String], command: String) throws(ConfigurationError) -> (
        file: String, pictures: Bool, server: [String]
    ) {
        guard let file = arguments.first, !file.hasPrefix("-") || file == "-" else {
            throw ConfigurationError(flag: command, reason: "needs the snapshot's file: themet \(command) FILE")
        }
        guard file != "-" else { throw ConfigurationError(flag: command, reason: "FILE must be a file, not -") }
        let rest = Array(arguments.dropFirst())
        guard command == "export" else { return (file, false, rest) }
        return (file, rest.contains("--images"), rest.filter { $0 != "--images" })
    }

    /// `themet export`; the exit status.
    static func export(to file: String, pictures: Bool, configuration: ServerConfiguration, logger: Logger) -> Int32 {
        let directory = configuration.cache.dataDirectory
        let progress = TerminalProgress(verb: "exporting")
        do {
            let manifest = try CacheSnapshot.export(
                directory: directory, to: file, createdBy: "themet \(MetService.version)",
                at: Date().timeIntervalSince1970, syncStartedAt: SyncState(directory: directory, logger: logger).load(),
                pictures: pictures, progress: progress.report)
            progress.end()
            let held = manifest.pictures.map { " and \($0.records) pictures (\(megabytes($0.bytes)))" } ?? ""
            print("exported \(manifest.records) records (\(megabytes(manifest.bytes)))\(held) to \(file)")
            return 0
        } catch {
            progress.end()
            FileHandle.standardError.write(Data("themet: export failed: \(error)\n".utf8))
            return 1
        }
    }

    /// `themet import`, of a file or of a URL's snapshot (`SnapshotDownload`); the exit status.
    static func importing(_ source: String, configuration: ServerConfiguration, logger: Logger) async -> Int32 {
        let directory = configuration.cache.dataDirectory
        guard configuration.cache.diskSize > 0 else {
            FileHandle.standardError.write(
                Data("themet: import needs the persistent cache; --disk-cache-size is 0\n".utf8))
            return 1
        }
        guard ServerConfiguration.isHTTPURL(source) else { return importing(file: source, configuration, logger) }
        switch await SnapshotDownload.fetch(source, into: directory, configuration: configuration) {
        case .success(let file):
            defer { unlink(file) }
            return importing(file: file, named: source, configuration, logger)
        case .failure(let failure):
            FileHandle.standardError.write(Data("themet: import refused: \(failure)\n".utf8))
            return 1
        }
    }

    /// Imports the snapshot `file` (called `name` in what is printed); the exit status.
    private static func importing(
        file: String, named name: String? = nil, _ configuration: ServerConfiguration, _ logger: Logger
    ) -> Int32 {
        let directory = configuration.cache.dataDirectory
        let hadCache = FileManager.default.fileExists(atPath: directory + "/cache.sqlite")
        let progress = TerminalProgress(verb: "checking, then importing")
        let verified: VerifiedSnapshot
        do {
            // Refused before the directory's cache is opened: a bad file changes nothing, not even that.
            verified = try CacheSnapshot.verify(file, progress: progress.report)
        } catch {
            progress.end()
            // A downloaded file is named by its URL: its own name is gone once this returns.
            let reason = name.map { "\(error)".replacingOccurrences(of: file, with: $0) } ?? "\(error)"
            FileHandle.standardError.write(Data("themet: import refused: \(reason)\n".utf8))
            return 1
        }
        guard
            let disk = DiskCache.open(directory: directory, capacity: configuration.cache.diskSize, logger: logger)
        else {
            progress.end()
            FileHandle.standardError.write(Data("themet: import failed: cannot open the cache in \(directory)\n".utf8))
            return 1
        }
        defer { disk.close() }
        let pictures =
            verified.manifest.pictures != nil && configuration.images.cacheSize > 0
            ? ImageFileTier.open(directory: directory, capacity: configuration.images.cacheSize, logger: logger)
            : nil
        defer { pictures?.close() }
        let report: SnapshotImport
        do {
            report = try CacheSnapshot.importing(
                verified, into: disk,
                pictures: pictures.map {
                    PictureTarget(
                        tier: $0, maxPixels: configuration.images.maxPixels, maxBytes: configuration.images.maxBytes)
                }, progress: progress.report)
        } catch {
            progress.end()
            FileHandle.standardError.write(Data("themet: import failed: \(error)\n".utf8))
            return 1
        }
        progress.end()
        if report.stored > 0 {
            adoptSync(report.manifest.syncStartedAt, in: directory, hadCache: hadCache, logger: logger)
        }
        var summary =
            "imported \(name ?? file): \(report.manifest.records) records, \(report.stored) stored, \(report.kept) kept "
            + "(held as new or newer)"
        if let listed = verified.manifest.pictures {
            if let done = report.pictures {
                summary +=
                    "; \(listed.records) pictures, \(done.stored) stored, \(done.kept) kept, \(done.refused) refused "
                    + "(beyond this server's bounds, or not the picture they say)"
            } else {
                summary +=
                    "; \(listed.records) pictures left out (no picture files: --image-cache-size is 0, or images/ "
                    + "could not be opened)"
            }
        }
        print(summary)
        return 0
    }

    /// The directory's last sync after an import that stored something: the older of its own and
    /// the snapshot's; the snapshot's for a directory that had no cache; none when the snapshot
    /// has none (the next sync then looks back a whole object lifetime).
    private static func adoptSync(_ theirs: Double?, in directory: String, hadCache: Bool, logger: Logger) {
        let state = SyncState(directory: directory, logger: logger)
        let own = state.load()
        do {
            switch (own, theirs) {
            case (let own?, let theirs?): try state.save(min(own, theirs))
            case (nil, let theirs?) where !hadCache: try state.save(theirs)
            case (_?, nil): try state.clear()
            default: break
            }
        } catch {
            logger.warning("import: cannot record the last sync in \(directory): \(error.localizedDescription)")
        }
    }

    private static func megabytes(_ bytes: Int) -> String {
        String(format: "%.1f MiB", Double(bytes) / 1_048_576)
    }
}
