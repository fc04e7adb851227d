import Foundation
import Testing

@testable import MetCore

@Suite("The latest search results become objects.json")
struct SearchStoreTests {
    /// An upstream where `cypress` finds 1 and 2 (2 has no image), `wheat` finds 3, and `nothing` nothing.
    private func upstream() -> FakeUpstream {
        let upstream = FakeUpstream()
        upstream.answer(SearchSample.v1("cypress"), with: SearchSample.ids([1, 2]))
        upstream.answer(SearchSample.v1("wheat"), with: SearchSample.ids([3]))
        upstream.answer(SearchSample.v1("nothing"), with: SearchSample.ids([]))
        upstream.answer(.object(id: 1), with: .json(SearchSample.record(1)))
        upstream.answer(.object(id: 2), with: .json(SearchSample.record(2, image: false)))
        upstream.answer(.object(id: 3), with: .json(SearchSample.record(3, title: "Wheat Field")))
        return upstream
    }

    /// The object IDs of the records in the file, or nil when it is missing or not a JSON array.
    private func fileIDs(_ harness: SearchHarness) -> [Int]? {
        guard let data = FileManager.default.contents(atPath: harness.storeFile),
            let array = try? JSONSerialization.jsonObject(with: data) as? [[String: Any]]
        else { return nil }
        return array.compactMap { $0["objectID"] as? Int }
    }

    /// The object IDs of the records in the file (fails the test if it is not a JSON array).
    private func storedIDs(_ harness: SearchHarness) throws -> [Int] {
        try #require(fileIDs(harness), "objects.json is missing or not a JSON array")
    }

    private func inode(_ path: String) throws -> Int? {
        try FileManager.default.attributesOfItem(atPath: path)[.systemFileNumber] as? Int
    }

    @Test func aSearchWithObjectsWritesThemAsAJSONArray() async throws {
        let harness = SearchHarness(upstream(), mode: .v1)
        #expect(!FileManager.default.fileExists(atPath: harness.storeFile))
        _ = await harness.get("/search?q=cypress")
        // Only the objects sent: not the one dropped for lack of an image.
        #expect(try storedIDs(harness) == [1])
        #expect(harness.service.store.ids == [1])
        #expect(harness.service.store.document == Array(("[" + SearchSample.record(1) + "]").utf8))
        #expect(FileManager.default.contents(atPath: harness.storeFile) == Data(harness.service.store.document))
        #expect(harness.directory.files == [SharedStore.fileName])  // no temporary file left behind
    }

    @Test func aNewResultReplacesTheFileByRenameAndSameResultsDoNotRewriteIt() async throws {
        let harness = SearchHarness(upstream(), mode: .v1)
        _ = await harness.get("/search?q=cypress")
        let first = try inode(harness.storeFile)

        _ = await harness.get("/search?q=wheat")
        #expect(try storedIDs(harness) == [3])
        #expect(try inode(harness.storeFile) != first)  // a new file renamed over the old one
        #expect(harness.directory.files == [SharedStore.fileName])

        // The same results again, on either path: nothing is written.
        try FileManager.default.removeItem(atPath: harness.storeFile)
        _ = await harness.get("/search?q=wheat")
        _ = try #require(harness.getImmediately("/search?q=wheat"))
        _ = await harness.get("/search?q=wheat&sort=title")
        for _ in 0..<1_000 { await Task.yield() }
        #expect(!FileManager.default.fileExists(atPath: harness.storeFile))
        #expect(harness.service.store.ids == [3])
    }

    @Test func aSearchAnsweredFromTheCacheStillBecomesTheLatest() async throws {
        let harness = SearchHarness(upstream(), mode: .v1)
        _ = await harness.get("/search?q=cypress")
        _ = await harness.get("/search?q=wheat")
        #expect(try storedIDs(harness) == [3])

        _ = try #require(harness.getImmediately("/search?q=cypress"))
        // The immediate path runs on a loop thread, so it writes from a task of its own.
        await waitUntil { harness.service.store.ids == [1] && fileIDs(harness) == [1] }
        #expect(harness.directory.files == [SharedStore.fileName])
    }

    @Test func aSearchWithoutObjectsKeepsTheLatest() async throws {
        let harness = SearchHarness(upstream(), mode: .v1)
        _ = await harness.get("/search?q=wheat")
        #expect(try await harness.get("/search?q=nothing").searchPage().total == 0)
        #expect(try storedIDs(harness) == [3])
        #expect(harness.service.store.ids == [3])
    }

    @Test func replaceReportsWhetherTheResultsChanged() throws {
        let directory = TemporaryDirectory()
        let store = SharedStore(directory: directory.path, capacity: 30, logger: MemoryLog().logger())
        let policy = FreshnessPolicy()
        func entry(_ id: Int) -> CacheEntry {
            let body = Array(SearchSample.record(id).utf8)
            return CacheEntry(
                key: MetResource.object(id: id).cacheKey, kind: .object, status: 200, body: body, storedAt: 0,
                policy: policy, details: EntryDetails.read(body, kind: .object))
        }
        #expect(store.document == Array("[]".utf8))
        #expect(store.replace(with: [entry(1), entry(2)]))
        #expect(!store.replace(with: [entry(1), entry(2)]))
        #expect(store.replace(with: [entry(2), entry(1)]))
        #expect(store.ids == [2, 1])
        let data = try #require(FileManager.default.contents(atPath: directory.path + "/" + SharedStore.fileName))
        #expect(try (JSONSerialization.jsonObject(with: data) as? [Any])?.count == 2)
    }

    @Test func anUnwritableDirectoryIsAWarningNotAFailure() async throws {
        let log = MemoryLog()
        let directory = TemporaryDirectory()
        let store = SharedStore(directory: directory.path + "/missing", capacity: 30, logger: log.logger())
        let body = Array(SearchSample.record(1).utf8)
        let entry = CacheEntry(
            key: MetResource.object(id: 1).cacheKey, kind: .object, status: 200, body: body, storedAt: 0,
            policy: FreshnessPolicy(), details: EntryDetails.read(body, kind: .object))
        #expect(store.replace(with: [entry]))
        #expect(store.ids == [1])
        #expect(log.lines.contains { $0.contains("warning") && $0.contains("cannot write") })
    }
}
