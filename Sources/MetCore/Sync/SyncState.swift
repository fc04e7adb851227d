import Foundation
import MetEngine

/// When the last successful `metadataDate` sync started: `sync.json` in the data directory,
/// `{"startedAt": <seconds since 1970>}`, written whole (a temporary file renamed over it).
public struct SyncState: Sendable {
    /// The file's name in the data directory.
    static let fileName = "sync.json"
    let path: String
    let logger: Logger

    public init(directory: String, logger: Logger) {
        path = directory + "/" + Self.fileName
        self.logger = logger
    }

    private struct Document: Codable {
        var startedAt: Double
    }

    /// The start of the last successful sync, or nil when there was none (or the file cannot be
    /// read: logged, and then treated as none). Blocking file I/O.
    public func load() -> Double? {
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        guard let document = try? JSONDecoder().decode(Document.self, from: data), document.startedAt.isFinite else {
            logger.warning("\(path) is not a sync record; syncing as if there had been none")
            return nil
        }
        return document.startedAt
    }

    /// Records a successful sync that started at `startedAt`. Blocking file I/O.
    public func save(_ startedAt: Double) throws {
        let data = try JSONEncoder().encode(Document(startedAt: startedAt))
        let temporary = path + ".\(ProcessInfo.processInfo.processIdentifier).tmp"
        try data.write(to: URL(fileURLWithPath: temporary))
        if rename(temporary, path) != 0 {
            let reason = String(cString: strerror(errno))
            try? FileManager.default.removeItem(atPath: temporary)
            throw CocoaError(.fileWriteUnknown, userInfo: [NSLocalizedDescriptionKey: reason])
        }
    }

    /// Forgets the last sync (the next one looks back a whole object lifetime). Blocking file I/O.
    public func clear() throws {
        guard FileManager.default.fileExists(atPath: path) else { return }
        try FileManager.default.removeItem(atPath: path)
    }
}
