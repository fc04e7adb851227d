import Foundation
import TestKit
import Testing

@testable import MetCore
@testable import MetEngine

/// Upstream answers for the search tests.
enum SearchSample {
    /// The filter every `/search` sends unless told otherwise.
    static let hasImages = RequestTarget.QueryItem(name: "hasImages", value: "true")

    /// The v1 search for `q` with `filters` (default: `hasImages=true`).
    static func v1(_ q: String = "cypress", filters: [RequestTarget.QueryItem] = [hasImages]) -> MetResource {
        .search(.v1, filters: filters, q: q)
    }

    /// The v1.1 page of 500 hits number `index` of the search for `q`.
    static func page(
        _ index: Int, _ q: String = "cypress", filters: [RequestTarget.QueryItem] = [hasImages]
    ) -> MetResource {
        .search(.v1_1, filters: filters, q: q, page: (offset: index * SearchAPI.pageLimit, limit: SearchAPI.pageLimit))
    }

    /// `{"total":N,"objectIDs":[…]}`; the IDs are `null` when there are none, as the Met sends them.
    static func ids(_ ids: [Int], total: Int? = nil) -> FakeUpstream.Answer {
        let list = ids.isEmpty ? "null" : "[" + ids.map(String.init).joined(separator: ",") + "]"
        return .json(#"{"total":\#(total ?? ids.count),"objectIDs":\#(list)}"#)
    }

    /// An object record with the members search reads. Without an image it is what the Met sends
    /// for a work that is not public domain: empty image URLs.
    static func record(_ id: Int, title: String = "Cypresses", year: Int? = 1889, image: Bool = true) -> String {
        let url = image ? "https://images.metmuseum.org/CRDImages/ep/web-large/DP\(id).jpg" : ""
        let dates = year.map { #""objectBeginDate":\#($0),"objectEndDate":\#($0),"# } ?? ""
        return #"{"objectID":\#(id),"isPublicDomain":\#(image),"primaryImage":"\#(url)","#
            + #""primaryImageSmall":"\#(url)",\#(dates)"title":"\#(title)"}"#
    }

    /// Answers every object of `ids` with a record (with an image).
    static func answerObjects(_ ids: some Sequence<Int>, on upstream: FakeUpstream) {
        for id in ids { upstream.answer(.object(id: id), with: .json(record(id))) }
    }
}

/// A `Harness` for search: a pacer too fast to matter and no retries (unless `configure` says
/// otherwise: a retry sleeps on the manual clock), its own data directory, and the search
/// generation to use.
struct SearchHarness {
    let harness: Harness
    let directory: TemporaryDirectory

    init(
        _ upstream: FakeUpstream = FakeUpstream(), mode: SearchAPIMode = .auto,
        configure: (inout ServerConfiguration) -> Void = { _ in }
    ) {
        let directory = TemporaryDirectory()
        self.directory = directory
        harness = Harness(upstream: upstream) { configuration in
            configuration.upstream.rate = 1_000
            configuration.upstream.burst = 1_000
            configuration.upstream.concurrency = 100
            configuration.upstream.retries = 0
            configuration.cache.dataDirectory = directory.path
            configuration.upstream.searchAPI = mode
            configure(&configuration)
        }
    }

    var upstream: FakeUpstream { harness.upstream }
    var time: ManualTime { harness.time }
    var service: MetService { harness.service }

    /// `objects.json` in the data directory.
    var storeFile: String { directory.path + "/" + SharedStore.fileName }

    func get(_ target: String, headers: HTTPFields = HTTPFields()) async -> Response {
        await harness.get(target, headers: headers)
    }

    func getImmediately(_ target: String, headers: HTTPFields = HTTPFields()) -> Response? {
        harness.getImmediately(target, headers: headers)
    }

    /// Waits until no background object fetch of any search is running.
    func waitForBackgroundFills(sourceLocation: SourceLocation = #_sourceLocation) async {
        await waitUntil({ service.engine.backgroundFillsRunning == 0 }, sourceLocation: sourceLocation)
    }
}

/// A `/search` body, decoded for assertions.
struct SearchPage {
    var objects: [Int]
    var missing: [Int]
    var withoutImage: [Int]
    var pending: [Int]
    var total: Int
    var offset: Int
    var limit: Int
    var next: String?
    /// The records as sent.
    var records: [[String: Any]]
    /// The echoed query.
    var query: [String: Any]
}

extension Response {
    /// The body as a `/search` page (fails the test when it is not one).
    func searchPage(sourceLocation: SourceLocation = #_sourceLocation) throws -> SearchPage {
        #expect(status == 200, "status \(status): \(text)", sourceLocation: sourceLocation)
        let document = try jsonObject(sourceLocation: sourceLocation)
        let records = try #require(document["objects"] as? [[String: Any]], sourceLocation: sourceLocation)
        func ids(_ name: String) throws -> [Int] {
            try #require(document[name] as? [Int], "\(name) is not a list of IDs", sourceLocation: sourceLocation)
        }
        return SearchPage(
            objects: records.compactMap { $0["objectID"] as? Int }, missing: try ids("missing"),
            withoutImage: try ids("withoutImage"), pending: try ids("pending"),
            total: try #require(document["total"] as? Int, sourceLocation: sourceLocation),
            offset: try #require(document["offset"] as? Int, sourceLocation: sourceLocation),
            limit: try #require(document["limit"] as? Int, sourceLocation: sourceLocation),
            next: document["next"] as? String, records: records,
            query: try #require(document["query"] as? [String: Any], sourceLocation: sourceLocation))
    }
}

/// An upstream that counts how many calls are inside it at once, around a `FakeUpstream`.
final class InFlightProbe: Upstream {
    let inner: FakeUpstream
    private let counts = Locked((current: 0, most: 0))

    init(_ inner: FakeUpstream) { self.inner = inner }

    var location: String { inner.location }

    /// The most calls that were in flight at the same time.
    var most: Int { counts.withLock { $0.most } }

    func get(
        path: String, query: [RequestTarget.QueryItem], conditions: UpstreamValidators?
    ) async throws(UpstreamError) -> UpstreamReply {
        counts.withLock {
            $0.current += 1
            $0.most = max($0.most, $0.current)
        }
        defer { counts.withLock { $0.current -= 1 } }
        return try await inner.get(path: path, query: query, conditions: conditions)
    }
}
