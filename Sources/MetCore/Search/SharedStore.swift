import Foundation

/// The latest search results, shared by every client: kept in memory and written as
/// `objects.json` (a JSON array of Met records) in the data directory, so other programs can read
/// it the way the app's widget read its shared file.
public final class SharedStore: Sendable {
    private struct State {
        var ids: [Int] = []
        var records: [[UInt8]] = []
    }

    private let state = Locked(State())
    /// Held across "update the state, write the file", so concurrent replacements reach the file
    /// in the order they changed the state (the file never ends on an older result than memory).
    /// Only `replace` takes it; readers (loop threads) take `state` alone.
    private let writer = Locked(())
    private let file: URL
    private let logger: Logger

    /// The file name inside the data directory.
    public static let fileName = "objects.json"

    /// - Parameter directory: the data directory (it must exist).
    public init(directory: String, logger: Logger) {
        file = URL(fileURLWithPath: directory).appendingPathComponent(Self.fileName)
        self.logger = logger
    }

    /// The IDs of the latest results, in order.
    public var ids: [Int] { state.withLock { $0.ids } }

    /// The latest results as the array written to `objects.json`.
    public var document: [UInt8] {
        Self.document(state.withLock { $0.records })
    }

    /// Makes `objects` the latest results, if they differ from the current ones, and writes the
    /// file. Blocking file I/O: call from a task, never from a loop thread. Returns whether it changed.
    @discardableResult
    public func replace(with objects: [CacheEntry]) -> Bool {
        let ids = objects.compactMap(\.objectID)
        return writer.withLock { _ in
            let changed = state.withLock { state -> Bool in
                guard state.ids != ids else { return false }
                state.ids = ids
                state.records = objects.map(\.body)
                return true
            }
            if changed { write(Self.document(objects.map(\.body))) }
            return changed
        }
    }

    /// Writes the file atomically: a temporary file in the same directory, then a rename, so a
    /// reader (or a crash) never sees half a document.
    private func write(_ bytes: [UInt8]) {
        do {
            try Data(bytes).write(to: file, options: .atomic)
        } catch {
            logger.warning("cannot write \(file.path): \(error.localizedDescription)")
        }
    }

    private static func document(_ records: [[UInt8]]) -> [UInt8] {
        var json = JSONWriter()
        json.beginArray()
        for record in records { json.raw(record) }
        json.endArray()
        return json.bytes
    }
}
