import Foundation
import MetImaging
import TestKit
import Testing

@testable import MetCore
@testable import MetEngine

/// Picture files in memory: `openFile` opens a new unlinked temporary file holding the bytes of
/// the version it holds of a key, as `ImageFileTier` opens the verified file of that version.
final class MemoryFileTier: FileTier {
    private let held = Locked<[String: (etag: String, body: [UInt8])]>([:])
    private let opened = Locked(0)

    func entry(for key: String) -> CacheEntry? { nil }

    func store(_ entry: CacheEntry) { held.withLock { $0[entry.key] = (entry.etag, entry.body) } }

    func remove(_ key: String) -> Bool { held.withLock { $0.removeValue(forKey: key) != nil } }

    var statistics: PersistentTierStatistics { PersistentTierStatistics() }

    func openFile(key: String, etag: String) -> OpenFile? {
        guard let version = held.withLock({ $0[key] }), version.etag == etag else { return nil }
        var template = Array((FileManager.default.temporaryDirectory.path + "/themet-body-XXXXXX").utf8CString)
        let descriptor = mkstemp(&template)
        guard descriptor >= 0 else { return nil }
        unlink(template)
        let file = OpenFile(descriptor: descriptor)
        guard version.body.withUnsafeBytes({ write(descriptor, $0.baseAddress, $0.count) }) == version.body.count
        else { return nil }
        opened.withLock { $0 += 1 }
        return file
    }

    /// Files opened so far.
    var openCount: Int { opened.withLock { $0 } }
}

/// `ImageEngine.fileBody`: a large picture's body is a file opened as each answer is sent, or the
/// bytes memory holds when the picture files do not hold that version then; and a response kept
/// for a second of plain hits keeps neither a descriptor nor the entry it came from.
@Suite("A picture's body sent from its file")
struct ImageFileBodyTests {
    static func engine(files: (any FileTier)?) -> ImageEngine {
        ImageEngine(
            configuration: ServerConfiguration(), upstream: FakeUpstream(), files: files, shared: nil,
            deriver: VipsDeriver(), time: ManualTime(), logger: MemoryLog().logger())
    }

    static func picture(size: Int = 100_000, fill: UInt8 = 7) -> CacheEntry {
        let body = (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31) ^ fill }
        let details = ImageDetails(
            contentType: "image/jpeg", width: 500, height: 400,
            upstream: UpstreamValidators(etag: "\"up\"", lastModified: nil))
        return CacheEntry(
            key: "/CRDImages/ep/original/DT1567.jpg", kind: .image, status: 200, body: body,
            etag: ETag.strong(for: body), gzipped: nil, message: nil, details: .image(details),
            storedAt: 1_000, freshUntil: 1_100, staleUntil: 1_200, revalidateUntil: 1_150)
    }

    /// The `count` bytes of `file` from `offset`.
    static func read(_ slice: FileSlice) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: slice.length)
        let read = bytes.withUnsafeMutableBytes {
            pread(slice.file.descriptor, $0.baseAddress, $0.count, off_t(slice.offset))
        }
        return Array(bytes.prefix(max(0, read)))
    }

    @Test func eachSendOpensTheFileOfThatVersionElseSendsMemory() throws {
        let files = MemoryFileTier()
        let engine = Self.engine(files: files)
        let entry = Self.picture()
        files.store(entry)
        let body = try #require(engine.fileBody(of: entry, 1_000..<6_000))
        #expect(body.offset == 1_000 && body.length == 5_000)
        for _ in 0..<2 {
            let slice = try #require(body.slice())
            #expect(Self.read(slice) == Array(entry.body[1_000..<6_000]))
        }
        #expect(files.openCount == 2 && engine.fileBodies.value == 2)

        // Another version on disk now: this body's bytes go from memory, and are not counted.
        files.store(Self.picture(fill: 9))
        #expect(body.slice() == nil)
        #expect(body.bytes() == Array(entry.body[1_000..<6_000]))
        #expect(engine.fileBodies.value == 2)
        let whole = try #require(engine.fileBody(of: entry, 0..<entry.body.count))
        #expect(whole.bytes() == entry.body)
    }

    @Test func withoutPictureFilesThereIsNoFileBody() {
        #expect(Self.engine(files: nil).fileBody(of: Self.picture(), 0..<100) == nil)
    }

    @Test func aKeptHitResponseKeepsNeitherItsEntryNorAFile() throws {
        let files = MemoryFileTier()
        let engine = Self.engine(files: files)
        let table = HitResponseTable(sets: 1)
        weak var released: CacheEntry?
        do {
            let entry = Self.picture()
            files.store(entry)
            released = entry
            let kept = table.response(for: entry.serial, second: 1_000, age: 0, ttl: 100, gzip: false) {
                var response = Response(status: 200)
                response.fileBody = engine.fileBody(of: entry, 0..<entry.body.count)
                return response
            }
            #expect(kept.fileBody != nil && kept.shared != nil)
        }
        // The kept response does not hold the entry.
        #expect(released == nil)
        #expect(files.openCount == 0)
    }
}
