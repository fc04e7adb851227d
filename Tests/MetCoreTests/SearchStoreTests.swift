import Foundation
import TestKit
import Testing

@testable import MetCore
@testable import MetEngine

@Suite("The latest search results become objects.json")
struct SearchStoreTests {
    /// An upstream where `cypress` finds 1 and 2 (2 has no image), `wheat` finds 3, `fields` 3
    /// and 1, and `nothing` nothing.
    private func upstream() -> FakeUpstream {
        let upstream = FakeUpstream()
        upstream.answer(SearchSample.v1("cypress"), with: SearchSample.ids([1, 2]))
        upstream.answer(SearchSample.v1("fields"), with: SearchSample.ids([3, 1]))
        upstream.answer(SearchSample.v1("wheat"), with: SearchSample.ids([3]))
        upstream.answer(SearchSample.v1("nothing"), with: SearchSample.ids([]))
        upstream.answer(.object(id: 1), with: .json(SearchSample.record(1)))
        upstream.answer(.object(id: 2), with: .json(SearchSample.record(2, image: false)))
        upstream.answer(.object(id: 3), with: .json(SearchSample.record(3, title: "Wheat Field")))
        return upstream
    }

    /// The object IDs of the records in the file once the writes asked for so far are done, or
    /// nil when it is missing or not a JSON array.
    private func fileIDs(_ harness: SearchHarness) -> [Int]? {
        harness.service.store.waitForWrites()
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
        harness.service.store.waitForWrites()
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
        #expect(fileIDs(harness) == nil)
        #expect(harness.service.store.ids == [3])
        #expect(harness.service.store.counts.writes == 2)
    }

    @Test func alternatedCachedSearchesWriteOnceEach() async throws {
        let harness = SearchHarness(upstream(), mode: .v1)
        _ = await harness.get("/search?q=cypress")
        #expect(try storedIDs(harness) == [1])
        _ = await harness.get("/search?q=wheat")
        #expect(try storedIDs(harness) == [3])
        let calls = harness.upstream.calls.count

        // Re-served from the cache, on either path, in any order: neither rewrites the file, and
        // the latest results stay the last new ones.
        for round in 0..<50 {
            let query = round.isMultiple(of: 2) ? "cypress" : "wheat"
            if round.isMultiple(of: 3) {
                _ = await harness.get("/search?q=\(query)")
            } else {
                _ = try #require(harness.getImmediately("/search?q=\(query)"))
            }
        }
        harness.service.store.waitForWrites()
        #expect(harness.service.store.counts == (replacements: 2, writes: 2))
        #expect(try storedIDs(harness) == [3])
        #expect(harness.upstream.calls.count == calls)
        let health = try #require(harness.getImmediately("/health")).jsonObject()
        #expect(health["store"] as? [String: Int] == ["records": 1, "replacements": 2, "writes": 2])
    }

    @Test func aSearchWhoseResultsChangedBecomesTheLatestAgain() async throws {
        let upstream = upstream()
        let harness = SearchHarness(upstream, mode: .v1)
        _ = await harness.get("/search?q=cypress")
        _ = await harness.get("/search?q=wheat")

        // Object 2 now has an image: cypress's first page is new, so it replaces wheat's.
        upstream.answer(.object(id: 2), with: .json(SearchSample.record(2)))
        harness.time.advance(by: 31 * 86_400)  // past every entry's freshness
        _ = await harness.get("/search?q=cypress")
        #expect(try storedIDs(harness) == [1, 2])
        #expect(harness.service.store.counts == (replacements: 3, writes: 3))
    }

    @Test(arguments: [
        "/search?q=fields&offset=1", "/search?q=fields&store=false", "/search?q=fields&offset=0&store=false",
        "/widget/timeline?q=fields&store=false", "/widget/timeline?q=fields&offset=1",
    ])
    func aLaterPageOrStoreFalseNeverWrites(target: String) async throws {
        let harness = SearchHarness(upstream(), mode: .v1)
        _ = await harness.get("/search?q=wheat")
        for _ in 0..<2 {
            let response = await harness.get(target)
            #expect(response.status == 200)
            #expect(response.text.contains(#""objectID":1"#))  // objects that would have replaced wheat's
            #expect(harness.getImmediately(target)?.status == 200)
        }
        #expect(try storedIDs(harness) == [3])
        #expect(harness.service.store.counts == (replacements: 1, writes: 1))
    }

    @Test(arguments: ["/search?q=cypress", "/widget/timeline?q=cypress"])
    func aHeadNeverWrites(target: String) async throws {
        let harness = SearchHarness(upstream(), mode: .v1)
        let head = Request(method: "HEAD", target: target)
        #expect(await harness.service.response(to: head).status == 200)
        #expect(harness.service.readyResponse(to: head)?.status == 200)
        #expect(fileIDs(harness) == nil)
        #expect(harness.service.store.ids.isEmpty)
        #expect(harness.service.store.counts == (replacements: 0, writes: 0))

        // The GET of the same search still becomes the latest, though it is now answered from the cache.
        _ = try #require(harness.getImmediately(target))
        #expect(try storedIDs(harness) == [1])
    }

    @Test(arguments: ["yes", "1", "TRUEE", "", "false,true"])
    func anInvalidStoreIsA400NamingIt(value: String) async throws {
        let harness = SearchHarness(upstream(), mode: .v1)
        for path in ["/search?q=cypress&store=", "/widget/timeline?q=cypress&store="] {
            let response = await harness.get(path + value)
            #expect(response.status == 400)
            #expect(response.problemCode == "invalid_parameter")
            #expect(try response.jsonObject()["parameter"] as? String == "store")
        }
        #expect(await harness.get("/search?q=cypress&store=true&store=false").status == 400)
        #expect(harness.upstream.calls.isEmpty)
    }

    @Test func manyReplacementsInARowCoalesceAndTheLastWins() throws {
        let directory = TemporaryDirectory()
        let store = SharedStore(directory: directory.path, capacity: 30, logger: MemoryLog().logger())
        for id in 1...200 { store.replace(with: [WidgetSample.entry(id, WidgetSample.record(id))]) }
        store.waitForWrites()
        let counts = store.counts
        #expect(counts.replacements == 200)
        #expect((1...200).contains(counts.writes))
        let data = try #require(FileManager.default.contents(atPath: directory.path + "/" + SharedStore.fileName))
        #expect((try JSONSerialization.jsonObject(with: data) as? [[String: Any]])?.first?["objectID"] as? Int == 200)
        #expect(directory.files == [SharedStore.fileName])
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
        store.waitForWrites()
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
        store.waitForWrites()
        #expect(log.lines.contains { $0.contains("warning") && $0.contains("cannot write") })
    }
}
