import Dispatch
import Foundation
import MetEngine

/// The latest search results, shared by every client and by the widget timeline: kept in memory
/// and written as `objects.json` (a JSON array of Met records) in the data directory, so other
/// programs can read it the way the app's widget read its shared file. It survives restarts.
///
/// Replacing is cheap and never blocks on the disk, so a loop thread may do it: memory changes at
/// once, and the file is written on the store's own serial dispatch queue (never a loop thread,
/// never the Swift cooperative pool). Writes coalesce: at most one is in flight, and a replacement
/// made meanwhile is written after it, the latest state winning over any not yet started.
public final class SharedStore: Sendable {
    /// One stored record: the Met's bytes and what the widget and deep links read from them.
    public struct Record: Sendable, Equatable {
        public var summary: ObjectSummary
        public var body: [UInt8]
    }

    /// Everything that changes, under one lock.
    private struct State {
        /// The latest results, in order.
        var records: [Record] = []
        /// For each search that replaced the store (`offer`), the IDs it brought; bounded by
        /// `maxSources`.
        var sources: [SearchQuery.StoreSource: [Int]] = [:]
        /// The records to write next, when a write is due and has not started.
        var pending: [Record]?
        /// Whether a drain of `pending` is queued or running on `queue`.
        var draining = false
        /// Times the latest results changed since start-up.
        var replacements = 0
        /// Changes with every change of `records`, loading included.
        var version = 0
        /// Times `objects.json` was written (successfully or not) since start-up.
        var writes = 0
    }

    private let state = Locked(State())
    /// Where `objects.json` is written: serial, so the file follows memory in order.
    private let queue = DispatchQueue(label: "themet.objects-json")
    private let file: URL
    private let logger: Logger
    /// The most records kept (`--widget-objects`).
    public let capacity: Int

    /// The file name inside the data directory.
    public static let fileName = "objects.json"
    /// The most searches remembered as sources; past it they are forgotten, which costs at most
    /// one extra write for a search asked again.
    static let maxSources = 256

    /// - Parameters:
    ///   - directory: the data directory (it must exist).
    ///   - capacity: the most records kept; a longer result keeps its first `capacity` records.
    public init(directory: String, capacity: Int, logger: Logger) {
        file = URL(fileURLWithPath: directory).appendingPathComponent(Self.fileName)
        self.capacity = capacity
        self.logger = logger
    }

    /// The stored records, in order.
    public var records: [Record] { state.withLock { $0.records } }

    /// The stored records and their version: the same version always means the same records,
    /// so what is rendered from them can be kept under it.
    var versionedRecords: (records: [Record], version: Int) { state.withLock { ($0.records, $0.version) } }

    /// The IDs of the stored records, in order.
    public var ids: [Int] { state.withLock { $0.records.map(\.summary.objectID) } }

    /// The stored records as the array written to `objects.json`.
    public var document: [UInt8] { Self.document(records) }

    /// How often the latest results changed, and how often `objects.json` was written, since
    /// start-up. Writes can be fewer than replacements: replacements made while a write is in
    /// flight are coalesced into one.
    public var counts: (replacements: Int, writes: Int) { state.withLock { ($0.replacements, $0.writes) } }

    /// Reads `objects.json` at start-up. A missing file means an empty store. A file that is not
    /// a JSON array of object records is reported, renamed aside (`objects.json.corrupt-<time>`,
    /// never deleted) and treated as empty. Temporary files an interrupted write left behind are
    /// removed, with a log line. Blocking file I/O: call before serving.
    public func load() {
        removeTemporaryFiles()
        guard let data = FileManager.default.contents(atPath: file.path) else { return }
        let bytes = [UInt8](data)
        guard let records = Self.records(in: bytes) else {
            do {
                let aside = try SetAside.move(file.path)
                logger.warning(
                    "\(file.path) is not a JSON array of Met records; moved it to \(aside) and started empty")
            } catch {
                logger.warning(
                    "\(file.path) is not a JSON array of Met records and could not be moved aside: "
                        + "\(error.localizedDescription); starting empty")
            }
            return
        }
        state.withLock { state in
            state.records = Array(records.prefix(capacity))
            state.version += 1
        }
        logger.info("loaded \(min(records.count, capacity)) latest result(s) from \(file.path)")
    }

    /// Makes `objects` (their first `capacity`) the latest results if their IDs differ from the
    /// current ones, and schedules the file write. Any thread, loop threads included: it never
    /// waits for the disk. Returns whether the results changed.
    @discardableResult
    public func replace(with objects: [CacheEntry]) -> Bool {
        replace(with: objects, from: nil)
    }

    /// Makes the first page of the search `source` the latest results, unless `source` already
    /// brought these very IDs (then the store is left as it is, even if another search replaced
    /// it since): so a search re-served from the cache never rewrites the file, while a search
    /// asked for the first time, or whose results changed, does. Any thread; never waits for the
    /// disk. Returns whether the results changed.
    ///
    /// - Parameter source: what identifies the search (`SearchQuery.storeSource`).
    @discardableResult
    func offer(_ objects: [CacheEntry], from source: SearchQuery.StoreSource) -> Bool {
        replace(with: objects, from: source)
    }

    /// Offers a search's page when its request may replace the results (`SearchQuery.replacesStore`)
    /// and the page has objects; see `offer(_:from:)`.
    func offer(_ result: SearchResult, from query: SearchQuery) {
        guard query.replacesStore, !result.objects.isEmpty else { return }
        offer(result.objects, from: query.storeSource)
    }

    private func replace(with objects: [CacheEntry], from source: SearchQuery.StoreSource?) -> Bool {
        let ids = objects.prefix(capacity).compactMap(\.summary?.objectID)
        let (changed, startsDrain) = state.withLock { state -> (Bool, Bool) in
            if let source {
                guard state.sources[source] != ids else { return (false, false) }
                if state.sources.count >= Self.maxSources { state.sources.removeAll() }
                state.sources[source] = ids
            }
            guard state.records.map(\.summary.objectID) != ids else { return (false, false) }
            state.records = objects.prefix(capacity).compactMap { entry -> Record? in
                guard case .object(let summary) = entry.details else { return nil }
                return Record(summary: summary, body: entry.body)
            }
            state.replacements += 1
            state.version += 1
            state.pending = state.records
            defer { state.draining = true }
            return (true, !state.draining)
        }
        if startsDrain { queue.async { self.drain() } }
        return changed
    }

    /// Blocks the calling thread until every write scheduled before the call has finished (or
    /// failed, with a warning). For shutdown and tests: the wait depends on the disk alone, never
    /// on a loop or the cooperative pool.
    public func waitForWrites() {
        queue.sync {}
    }

    /// On `queue`: writes the pending records until none are left, so a replacement made while a
    /// write was in flight is written next, and only the latest of several.
    private func drain() {
        while let records = state.withLock({ state -> [Record]? in
            guard let pending = state.pending else {
                state.draining = false
                return nil
            }
            state.pending = nil
            return pending
        }) {
            write(Self.document(records))
            state.withLock { $0.writes += 1 }
        }
    }

    /// Writes the file atomically: a temporary file in the same directory (`temporaryName`),
    /// flushed to disk, then renamed over `objects.json`, so a reader (or a crash) never sees half
    /// a document. On `queue` only.
    private func write(_ bytes: [UInt8]) {
        let temporary = file.deletingLastPathComponent().appendingPathComponent(Self.temporaryName).path
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else {
            logger.warning("cannot write \(file.path): open(\(temporary)): \(String(cString: strerror(errno)))")
            return
        }
        var failure: String?
        bytes.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = Glibc.write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
                if written < 0 && errno == EINTR { continue }
                guard written > 0 else {
                    failure = "write: \(String(cString: strerror(errno)))"
                    return
                }
                offset += written
            }
        }
        if failure == nil, fsync(descriptor) != 0 { failure = "fsync: \(String(cString: strerror(errno)))" }
        close(descriptor)
        if failure == nil, rename(temporary, file.path) != 0 { failure = "rename: \(String(cString: strerror(errno)))" }
        if let failure {
            unlink(temporary)
            logger.warning("cannot write \(file.path): \(failure)")
        }
    }

    /// The temporary file a write goes through: `objects.json.<pid>.tmp`, named for this process
    /// so two servers on one data directory never write into each other's.
    private static var temporaryName: String { "\(fileName).\(getpid()).tmp" }

    /// Whether `name` is a temporary file an interrupted write left: this server's
    /// (`objects.json.<pid>.tmp`) or the `.dat.nosync*` of Foundation's atomic write, which
    /// earlier versions used.
    static func isLeftoverTemporary(_ name: String) -> Bool {
        (name.hasPrefix(fileName + ".") && name.hasSuffix(".tmp")) || name.hasPrefix(".dat.nosync")
    }

    /// Removes the temporary files interrupted writes left in the data directory, saying so.
    private func removeTemporaryFiles() {
        let directory = file.deletingLastPathComponent().path
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        for name in names.sorted() where Self.isLeftoverTemporary(name) {
            let path = directory + "/" + name
            do {
                try FileManager.default.removeItem(atPath: path)
                logger.info("removed \(path), left by an interrupted write of \(Self.fileName)")
            } catch {
                logger.warning("cannot remove \(path), left by an interrupted write: \(error.localizedDescription)")
            }
        }
    }

    /// The records of a JSON array of Met object records, or nil if it is anything else.
    static func records(in bytes: [UInt8]) -> [Record]? {
        guard let elements = JSONProjection.topLevelElements(bytes) else { return nil }
        var records: [Record] = []
        for range in elements {
            let body = Array(bytes[range])
            guard let summary = ObjectSummary(json: body) else { return nil }
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
