import Foundation
import MetCore
import MetDisk
import MetEngine

/// `themet reindex`: empties the local search index of --data-dir's cache and builds it again
/// from every object record stored, with a progress line on a terminal.
enum ReindexCommand {
    static let usage = """
        usage: themet reindex [server flags]

        Rebuilds the local search index (/search?source=local) of the cache in --data-dir from
        every object record it holds. The index is kept in step as records are stored, so this is
        for a cache an earlier build wrote to after this one indexed it, or an index in doubt. A
        server may run on the directory meanwhile: its searches see the index fill again. Stopped
        before its end, it leaves the index partial: run it again (or restart a server on the
        directory, which finishes the build). Exit status: 0, 1 when the cache cannot be opened or
        the index cannot be written, 64 for bad arguments.
        """

    /// Rebuilds the index; the exit status.
    static func run(configuration: ServerConfiguration, logger: Logger) -> Int32 {
        let directory = configuration.cache.dataDirectory
        guard configuration.cache.diskSize > 0,
            let disk = DiskCache.open(directory: directory, capacity: configuration.cache.diskSize, logger: logger)
        else {
            FileHandle.standardError.write(
                Data("themet: reindex needs the persistent cache of \(directory), which cannot be opened\n".utf8))
            return 1
        }
        defer { disk.close() }
        let progress = TerminalProgress(verb: "indexing")
        let started = Date()
        do {
            let total = try disk.objectRecordCount()
            try disk.rebuildSearchIndex { progress.report($0, total) }
            progress.end()
            var everything = LocalSearch()
            everything.limit = 1
            let indexed = try disk.search(everything)?.indexed ?? 0
            print(
                "indexed \(indexed) records of \(directory) in "
                    + String(format: "%.1f s", Date().timeIntervalSince(started)))
            return 0
        } catch {
            progress.end()
            FileHandle.standardError.write(Data("themet: reindex failed: \(error)\n".utf8))
            return 1
        }
    }
}
