import Foundation

/// The latest search results, shared by every client and by the widget timeline: kept in memory
/// and written as `objects.json` (a JSON array of Met records) in the data directory, so other
/// programs can read it the way the app's widget read its shared file. It survives restarts.
public final class SharedStore: Sendable {
    /// One stored record: the Met's bytes and what the widget and deep links read from them.
    public struct Record: Sendable, Equatable {
        public var summary: ObjectSummary
        public var body: [UInt8]
    }

    private let state = Locked<[Record]>([])
    /// Held across "update the records, write the file", so concurrent replacements reach the
    /// file in the same order as memory. Taken only by `replace`; readers take `state` alone.
    private let writer = Locked(())
    private let file: URL
    private let logger: Logger
    /// The most records kept (`--widget-objects`).
    public let capacity: Int

    /// The file name inside the data directory.
    public static let fileName = "objects.json"

    /// - Parameters:
    ///   - directory: the data directory (it must exist).
    ///   - capacity: the most records kept; a longer result keeps its first `capacity` records.
    public init(directory: String, capacity: Int, logger: Logger) {
        file = URL(fileURLWithPath: directory).appendingPathComponent(Self.fileName)
        self.capacity = capacity
        self.logger = logger
    }

    /// The stored records, in order.
    public var records: [Record] { state.withLock { $0 } }

    /// The IDs of the stored records, in order.
    public var ids: [Int] { state.withLock { $0.map(\.summary.objectID) } }

    /// The stored records as the array written to `objects.json`.
    public var document: [UInt8] { Self.document(records) }

    /// Reads `objects.json` at start-up. A missing file means an empty store. A file that is not
    /// a JSON array of object records is reported, renamed aside (`objects.json.corrupt-<time>`,
    /// never deleted) and treated as empty. Blocking file I/O: call before serving.
    public func load() {
        guard let data = FileManager.default.contents(atPath: file.path) else { return }
        let bytes = [UInt8](data)
        guard let records = Self.records(in: bytes) else {
            let aside = Self.unusedName(file.path + ".corrupt-\(Int(Date().timeIntervalSince1970))")
            do {
                try FileManager.default.moveItem(atPath: file.path, toPath: aside)
                logger.warning(
                    "\(file.path) is not a JSON array of Met records; moved it to \(aside) and started empty")
            } catch {
                logger.warning(
                    "\(file.path) is not a JSON array of Met records and could not be moved aside: "
                        + "\(error.localizedDescription); starting empty")
            }
            return
        }
        state.withLock { $0 = Array(records.prefix(capacity)) }
        logger.info("loaded \(min(records.count, capacity)) latest result(s) from \(file.path)")
    }

    /// Makes `objects` (their first `capacity`) the latest results if they differ from the
    /// current ones, and writes the file atomically. Blocking file I/O: call from a task, never
    /// from a loop thread. Returns whether it changed.
    @discardableResult
    public func replace(with objects: [CacheEntry]) -> Bool {
        let records = objects.prefix(capacity).compactMap { entry -> Record? in
            guard case .object(let summary) = entry.details else { return nil }
            return Record(summary: summary, body: entry.body)
        }
        return writer.withLock { _ in
            let changed = state.withLock { state -> Bool in
                guard state.map(\.summary.objectID) != records.map(\.summary.objectID) else { return false }
                state = records
                return true
            }
            if changed { write(Self.document(records)) }
            return changed
        }
    }

    /// Whether `objects` would change the store (cheap; for the loop thread to decide whether to
    /// start a task that calls `replace`).
    public func differs(from objects: [CacheEntry]) -> Bool {
        let ids = objects.prefix(capacity).compactMap(\.objectID)
        return state.withLock { $0.map(\.summary.objectID) != ids }
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

    /// `path`, or `path-2`, `path-3`, … : the first that does not exist, so nothing set aside
    /// earlier is ever overwritten.
    private static func unusedName(_ path: String) -> String {
        var candidate = path
        var number = 1
        while FileManager.default.fileExists(atPath: candidate) {
            number += 1
            candidate = "\(path)-\(number)"
        }
        return candidate
    }

    /// The records of a JSON array of Met object records, or nil if it is anything else.
    static func records(in bytes: [UInt8]) -> [Record]? {
        guard let elements = JSONProjection.topLevelElements(bytes) else { return nil }
        var records: [Record] = []
        for range in elements {
            let body = Array(bytes[range])
            guard let summary = try? JSONDecoder().decode(ObjectSummary.self, from: Data(body)) else { return nil }
            records.append(Record(summary: summary, body: body))
        }
        return records
    }

    private static func document(_ records: [Record]) -> [UInt8] {
        var json = JSONWriter()
        json.beginArray()
        for record in records { json.raw(record.body) }
        json.endArray()
        return json.bytes
    }
}
