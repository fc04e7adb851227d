import Foundation
import MetImaging
import TestKit
import Testing

@testable import MetCore
@testable import MetEngine

/// A `MetService` wired to a fake upstream, a manual clock and a memory log: the whole server
/// below the HTTP layer, with no sockets.
struct Harness {
    let upstream: FakeUpstream
    let time: ManualTime
    let log: MemoryLog
    let configuration: ServerConfiguration
    let service: MetService

    /// The bytes served at `/openapi.yaml` in tests.
    static let openAPI = Array("openapi: 3.1.0\ninfo:\n  title: TheMet\n".utf8)

    /// - Parameters:
    ///   - upstream: the fake the service fetches from.
    ///   - configure: changes to the default configuration (TTLs, limits, CORS origin, pacing).
    ///
    /// The upstream policy starts out of the way (`unpaced`): the manual clock moves only when a
    /// test moves it, so a call waiting for a token or a back-off would wait forever in a test
    /// about something else. Tests of pacing and retries set the policy in `configure`.
    ///   - disk: the persistent tier under memory; none by default.
    ///   - shared: the tier shared with other instances; none by default.
    ///   - time: the clock; a new one by default (instances of one group share theirs).
    ///   - random: the draws of `/random`; the system's by default.
    init(
        upstream: FakeUpstream = FakeUpstream(), disk: (any PersistentTier)? = nil,
        shared: (any SharedTier)? = nil, time: ManualTime = ManualTime(),
        random: any RandomSource = SystemRandomSource(), configure: (inout ServerConfiguration) -> Void = { _ in }
    ) {
        self.init(
            upstream: upstream, disk: disk, shared: shared, time: time, compress: nil, random: random,
            configure: configure)
    }

    /// A harness whose service keeps compressed copies made by `compress` (a stand-in for gzip).
    init(upstream: FakeUpstream, compressingWith compress: @escaping @Sendable ([UInt8]) -> [UInt8]) {
        self.init(
            upstream: upstream, disk: nil, shared: nil, time: ManualTime(), compress: compress,
            random: SystemRandomSource(), configure: { _ in })
    }

    private init(
        upstream: FakeUpstream, disk: (any PersistentTier)?, shared: (any SharedTier)?, time: ManualTime,
        compress: (@Sendable ([UInt8]) -> [UInt8])?, random: any RandomSource,
        configure: (inout ServerConfiguration) -> Void
    ) {
        var configuration = ServerConfiguration()
        Self.unpaced(&configuration)
        // Most tests are about what expiry does; the stale-while-revalidate tests turn it on.
        configuration.cache.freshness.staleWhileRevalidate = 0
        configure(&configuration)
        self.upstream = upstream
        self.time = time
        self.log = MemoryLog()
        self.configuration = configuration
        self.service = Self.service(
            configuration: configuration, upstream: upstream, disk: disk, shared: shared, time: time,
            logger: log.logger(), compress: compress, random: random)
    }

    /// A service over an engine of its own, both made from `configuration`, as `themet` makes them.
    static func service(
        configuration: ServerConfiguration, upstream: any Upstream, disk: (any PersistentTier)? = nil,
        shared: (any SharedTier)? = nil, time: any TimeSource, logger: Logger,
        compress: (@Sendable ([UInt8]) -> [UInt8])? = nil, random: any RandomSource = SystemRandomSource()
    ) -> MetService {
        let engine = CacheEngine(
            configuration: configuration, upstream: upstream, disk: disk, shared: shared, deriver: VipsDeriver(),
            time: time, logger: logger, compress: compress)
        return MetService(
            configuration: configuration, engine: engine, openAPI: openAPI, compress: compress, random: random)
    }

    /// A `metadataDate` synchronizer over the service's engine.
    var synchronizer: Synchronizer { Synchronizer(engine: service.engine, configuration: configuration) }

    /// A warmer over the service's engine.
    var warmer: Warmer { Warmer(engine: service.engine, searchAPI: configuration.upstream.searchAPI) }

    /// No waits between upstream calls and no retries: a rate and burst no test reaches, a slot
    /// for every call, one attempt per fetch.
    static func unpaced(_ configuration: inout ServerConfiguration) {
        configuration.upstream.rate = 10_000
        configuration.upstream.burst = 1_000_000
        configuration.upstream.concurrency = 64
        configuration.upstream.retries = 0
    }

    /// `GET target`, waiting for the upstream when needed.
    func get(_ target: String, headers: HTTPFields = HTTPFields()) async -> Response {
        await service.response(to: .get(target, headers: headers))
    }

    /// The upstream key `GET target` is planned to (its one call, made by a new harness on an empty
    /// cache), or nil when it is answered without the upstream.
    static func plannedKey(for target: String) async -> String? {
        let harness = Harness()
        _ = await harness.get(target)
        return harness.upstream.calls.first
    }

    /// `GET target` as the loop thread answers it: the response when it is ready at once, nil
    /// when it would suspend (the suspension is dropped, which starts nothing).
    func getImmediately(_ target: String, headers: HTTPFields = HTTPFields()) -> Response? {
        service.readyResponse(to: .get(target, headers: headers))
    }
}

/// Met bodies used across the tests.
enum Sample {
    /// An object record as the Met formats it (no spaces), with nested values and a null.
    static func object(_ id: Int, title: String = "Wheat Field with Cypresses") -> String {
        #"{"objectID":\#(id),"isHighlight":true,"#
            + #""primaryImageSmall":"https://images.metmuseum.org/CRDImages/ep/web-large/DT1567.jpg","#
            + #""title":"\#(title)","artistDisplayName":"Vincent van Gogh","objectDate":"1889","#
            + #""measurements":[{"elementName":"Overall","elementMeasurements":{"Height":73.2,"Width":93.4}}],"#
            + #""tags":null,"creditLine":"Purchase, The Annenberg Foundation Gift, 1993"}"#
    }

    /// The upstream key of object `id`.
    static func objectKey(_ id: Int) -> String { MetResource.object(id: id).cacheKey }

    /// An object ID list.
    static let objectList = #"{"total":3,"objectIDs":[436535,45734,1]}"#

    /// The department list.
    static let departments =
        #"{"departments":[{"departmentId":1,"displayName":"American Decorative Arts"},"#
        + #"{"departmentId":11,"displayName":"European Paintings"}]}"#
}

extension Response {
    /// The body as UTF-8 text.
    var text: String { String(decoding: body, as: UTF8.self) }

    /// The body parsed as a JSON object.
    func jsonObject(sourceLocation: SourceLocation = #_sourceLocation) throws -> [String: Any] {
        let value = try JSONSerialization.jsonObject(with: Data(body), options: [.fragmentsAllowed])
        return try #require(
            value as? [String: Any], "body is not a JSON object: \(text)", sourceLocation: sourceLocation)
    }

    /// The problem document's `code`, or nil when the body is not a problem.
    var problemCode: String? {
        guard headers["Content-Type"] == Response.problemContentType,
            let object = try? JSONSerialization.jsonObject(with: Data(body)) as? [String: Any]
        else { return nil }
        return object["code"] as? String
    }
}

/// Yields until `condition` holds. Not a timing: it only lets other tasks run. After very many
/// tries it records an issue, so a bug fails the test instead of hanging it.
func waitUntil(
    _ condition: () -> Bool, sourceLocation: SourceLocation = #_sourceLocation
) async {
    for _ in 0..<2_000_000 {
        if condition() { return }
        await Task.yield()
    }
    Issue.record("the condition never held", sourceLocation: sourceLocation)
}

extension RequestPeer {
    /// A client on this machine, straight (no proxy).
    static let loopback = RequestPeer(address: IPAddress("127.0.0.1")!)
    /// A client elsewhere on the LAN.
    static let lan = RequestPeer(address: IPAddress("192.0.2.10")!)
}

extension Responder {
    /// The response to `request` when the loop thread has it at once; nil when the answer would
    /// suspend (the suspension is dropped, which starts nothing).
    func readyResponse(to request: Request) -> Response? {
        guard case .ready(let response) = respond(to: request) else { return nil }
        return response
    }
}
