import Foundation
import TestKit
import Testing

@testable import MetCore
@testable import MetEngine

@Suite("The shared store survives restarts")
struct SharedStoreLoadTests {
    /// A store on `directory` with its own memory log, loaded as `themet` loads it at start-up.
    private func loadedStore(_ directory: TemporaryDirectory, capacity: Int = 30) -> (SharedStore, MemoryLog) {
        let log = MemoryLog()
        let store = SharedStore(directory: directory.path, capacity: capacity, logger: log.logger())
        store.load()
        return (store, log)
    }

    private func write(_ text: String, in directory: TemporaryDirectory) throws {
        try Data(text.utf8).write(to: URL(fileURLWithPath: directory.path + "/" + SharedStore.fileName))
    }

    @Test func aSecondServiceOnTheSameDirectoryLoadsTheSameRecordsInOrder() async throws {
        let upstream = FakeUpstream()
        upstream.answer(SearchSample.v1(), with: SearchSample.ids([30, 10, 20]))
        for id in [30, 10, 20] { upstream.answer(.object(id: id), with: .json(WidgetSample.record(id))) }
        let first = SearchHarness(upstream, mode: .v1)
        #expect(try await first.get("/search?q=cypress").searchPage().objects == [30, 10, 20])
        let target = "/widget/timeline?family=large&start=\(WidgetSample.start)"
        let before = await first.get(target)

        // The restart: the server stops (finishing its write), then a new service on the same data
        // directory, with an upstream that knows nothing.
        first.service.store.waitForWrites()
        let second = FakeUpstream()
        let log = MemoryLog()
        let restarted = Harness.service(
            configuration: first.harness.configuration, upstream: second, time: ManualTime(), logger: log.logger())
        #expect(restarted.store.ids.isEmpty)
        restarted.store.load()
        #expect(restarted.store.ids == [30, 10, 20])
        #expect(restarted.store.records == first.service.store.records)
        #expect(restarted.store.document == first.service.store.document)

        let after = await restarted.response(to: .get(target))
        #expect(after.status == 200)
        #expect(after.body == before.body)
        #expect(after.headers["ETag"] == before.headers["ETag"])
        #expect(second.calls.isEmpty)
        #expect(log.lines.contains { $0.contains("loaded 3") })
        #expect(!log.lines.contains { $0.hasPrefix("warning") })
    }

    @Test(arguments: [(30, [1, 2, 3, 4, 5]), (5, [1, 2, 3, 4, 5]), (3, [1, 2, 3]), (1, [1])])
    func loadingKeepsTheFirstCapacityRecords(capacity: Int, kept: [Int]) throws {
        let directory = TemporaryDirectory()
        let (writer, _) = loadedStore(directory)
        WidgetSample.fill(writer, with: [1, 2, 3, 4, 5])

        let (store, _) = loadedStore(directory, capacity: capacity)
        #expect(store.ids == kept)
        #expect(store.records == Array(writer.records.prefix(capacity)))
    }

    @Test func aNewResultKeepsItsFirstCapacityRecordsInMemoryAndInTheFile() throws {
        let directory = TemporaryDirectory()
        let (store, _) = loadedStore(directory, capacity: 2)
        WidgetSample.fill(store, with: [9, 8, 7])
        #expect(store.ids == [9, 8])
        #expect(loadedStore(directory).0.ids == [9, 8])
    }

    @Test func widgetObjectsBoundsTheStoreASearchFills() async throws {
        let upstream = FakeUpstream()
        upstream.answer(SearchSample.v1(), with: SearchSample.ids([30, 10, 20]))
        for id in [30, 10, 20] { upstream.answer(.object(id: id), with: .json(WidgetSample.record(id))) }
        let configuration = try ServerConfiguration.parse(
            arguments: ["--widget-objects", "2"], environment: [:], processorCount: 1)
        let harness = SearchHarness(upstream, mode: .v1) {
            $0.presentation.widgetObjects = configuration.presentation.widgetObjects
        }
        #expect(try await harness.get("/search?q=cypress").searchPage().objects == [30, 10, 20])
        #expect(harness.service.store.ids == [30, 10])
        #expect(try await harness.get("/widget/timeline").timeline().ids == [30, 10])
    }

    @Test func aMissingFileIsAnEmptyStoreWithoutAWord() {
        let directory = TemporaryDirectory()
        let (store, log) = loadedStore(directory)
        #expect(store.ids.isEmpty)
        #expect(store.document == Array("[]".utf8))
        #expect(log.lines.isEmpty)
        #expect(directory.files.isEmpty)
    }

    @Test(arguments: ["[]", " [ ]\n"])
    func anEmptyArrayIsAnEmptyStoreLeftAlone(text: String) throws {
        let directory = TemporaryDirectory()
        try write(text, in: directory)
        let (store, log) = loadedStore(directory)
        #expect(store.ids.isEmpty)
        #expect(!log.lines.contains { $0.hasPrefix("warning") })
        #expect(directory.files == [SharedStore.fileName])
    }

    @Test func aFileWrittenByAnotherProgramLoadsWithItsOwnBytes() throws {
        let directory = TemporaryDirectory()
        let first = WidgetSample.record(2)
        try write("[\n  \(first),\n  {\"objectID\": 1, \"title\": \"Bare\"}\n]\n", in: directory)
        let (store, _) = loadedStore(directory)
        #expect(store.ids == [2, 1])
        #expect(store.records.first?.body == Array(first.utf8))
        #expect(store.records.last?.summary.title == "Bare")
        #expect(store.document == Array("[\(first),{\"objectID\": 1, \"title\": \"Bare\"}]".utf8))
    }

    @Test(arguments: [
        "this is not JSON", "", "   ", #"{"objectID":1}"#, #"{"objects":[{"objectID":1}]}"#, "null", "42",
        #"[{"objectID":1},42]"#, #"[{"objectID":1},"2"]"#, #"[{"objectID":1},null]"#, #"[{"title":"no ID"}]"#,
        #"[{"objectID":"1"}]"#, #"[{"objectID":1}"#, #"[{"objectID":1}] trailing"#, #"[{"objectID":1},]"#,
        "[[]]",
    ])
    func aCorruptFileIsSetAsideUnchangedAndTheStoreStartsEmpty(text: String) throws {
        let directory = TemporaryDirectory()
        try write(text, in: directory)
        let (store, log) = loadedStore(directory)
        #expect(store.ids.isEmpty)

        let files = directory.files
        #expect(files.count == 1)
        let aside = try #require(files.first)
        #expect(aside.wholeMatch(of: /objects\.json\.corrupt-[0-9]+/) != nil, "\(aside)")
        #expect(FileManager.default.contents(atPath: directory.path + "/" + aside) == Data(text.utf8))
        let warnings = log.lines.filter { $0.hasPrefix("warning") }
        #expect(warnings.count == 1)
        #expect(warnings.first?.contains(aside) == true)

        // The next results make a new objects.json; the corrupt one is kept.
        WidgetSample.fill(store, with: [1])
        #expect(directory.files == [SharedStore.fileName, aside])
        #expect(FileManager.default.contents(atPath: directory.path + "/" + aside) == Data(text.utf8))
        #expect(loadedStore(directory).0.ids == [1])
    }

    @Test func aCorruptFileNeverReplacesOneSetAsideBefore() throws {
        let directory = TemporaryDirectory()
        // Earlier set-aside files for this second and the next two, as if the server had been
        // restarted on a corrupt file several times within them.
        let now = Int(Date().timeIntervalSince1970)
        let earlier = (now...(now + 2)).map { "\(SharedStore.fileName).corrupt-\($0)" }
        for name in earlier { try Data("earlier".utf8).write(to: URL(fileURLWithPath: directory.path + "/" + name)) }
        try write("not json", in: directory)
        let (store, _) = loadedStore(directory)
        #expect(store.ids.isEmpty)
        for name in earlier {
            #expect(FileManager.default.contents(atPath: directory.path + "/" + name) == Data("earlier".utf8))
        }
        let added = Set(directory.files).subtracting(earlier)
        #expect(added.count == 1)
        let aside = try #require(added.first)
        #expect(FileManager.default.contents(atPath: directory.path + "/" + aside) == Data("not json".utf8))
    }

    @Test func aServiceWithACorruptFileServesThePlaceholder() async throws {
        let harness = SearchHarness()
        try Data("{oops".utf8).write(to: URL(fileURLWithPath: harness.storeFile))
        harness.service.store.load()
        let timeline = try await harness.get("/widget/timeline").timeline()
        #expect(timeline.entries.isEmpty)
        #expect(timeline.placeholder != nil)
        #expect(!FileManager.default.fileExists(atPath: harness.storeFile))
        #expect(harness.harness.log.lines.contains { $0.hasPrefix("warning") && $0.contains(".corrupt-") })
    }

    @Test func temporaryFilesOfInterruptedWritesAreRemovedAtLoad() throws {
        let directory = TemporaryDirectory()
        let (writer, _) = loadedStore(directory)
        WidgetSample.fill(writer, with: [4, 2])
        // What `kill -9` in the middle of a write leaves: this server's and Foundation's temporary
        // files (earlier versions wrote through `Data.write(options: .atomic)`).
        let leftovers = ["\(SharedStore.fileName).4242.tmp", ".dat.nosync1a2b.XyZ123"]
        for name in leftovers {
            try Data("[{\"objectID\":".utf8).write(to: URL(fileURLWithPath: directory.path + "/" + name))
        }
        let kept = ["\(SharedStore.fileName).corrupt-1", "notes.tmp"]
        for name in kept { try Data("x".utf8).write(to: URL(fileURLWithPath: directory.path + "/" + name)) }

        let (store, log) = loadedStore(directory)
        #expect(store.ids == [4, 2])
        #expect(Set(directory.files) == Set([SharedStore.fileName] + kept))
        for name in leftovers {
            #expect(log.lines.contains { $0.hasPrefix("info") && $0.contains("removed") && $0.contains(name) })
        }
        #expect(!log.lines.contains { $0.hasPrefix("warning") })
    }
}
