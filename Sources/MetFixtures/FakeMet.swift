import Foundation
import MetCore
import MetEngine
import MetImaging

/// The fake Met Collection API as a `Responder`: answers from a `FixtureArchive` with the real
/// API's transport habits (chunked, gzip on request, Imperva cookies and headers, no caching
/// headers), and can misbehave on purpose: added latency, random 503s, the firewall's 403 block
/// after a burst (docs/MET-API.md §1, §6), and either generation of search missing
/// (docs/MET-API.md §5.1). It is the image host too: the pictures its records name, under
/// `/CRDImages/` (`FixtureImages`). `met-fixture-server` serves it over HTTP.
///
/// Every request except `GET /__stats` and `POST /__change` is counted; `/__stats` reports the
/// counts as JSON, and `/__change` marks records changed (`FakeMet+Changes.swift`).
/// Thread-safe: counters, the block window and the random generator sit in one `Locked`.
public final class FakeMet: Responder {
    /// Which generations of the Met's search the fake answers (docs/MET-API.md §5.1).
    public enum SearchGenerations: String, Sendable, CaseIterable {
        /// Both `/v1/search` and `/v1.1/search` (the default).
        case both
        /// Only `/v1/search`; `/v1.1/search` answers 404, as on the Met before 2026.
        case v1 = "v1"
        /// Only `/v1.1/search`; `/v1/search` answers 410 with the retirement notice, as reported
        /// after 2026-10-01.
        // swift-format-ignore: AlwaysUseLowerCamelCase
        // The Met's own name, v1.1, with the dot that no identifier can hold.
        case v1_1 = "v1.1"
    }

    /// How the fake misbehaves. The defaults behave like a healthy, fast Met.
    public struct Options: Sendable {
        /// Seconds to wait before answering each request (except `/__stats`); default 0. When
        /// above 0, answers come only from the async path, which sleeps without blocking a thread.
        public var latency: Double
        /// Fraction of requests, 0…1, answered `503` with a small HTML page; default 0.
        public var failRate: Double
        /// After this many requests in the current window, every request gets the firewall's 403
        /// HTML page for `blockSeconds`; then the count starts again from 0. The window is the
        /// time since start-up or since the last block ended: the count does not decay on its own.
        /// nil (the default) never blocks.
        public var blockAfter: Int?
        /// How long a block lasts, in seconds; default 60.
        public var blockSeconds: Double
        /// Seed of the generator that decides which requests fail; the same seed and request
        /// order give the same failures. Default 1.
        public var seed: UInt64
        /// Which search generations answer; default both.
        public var searchAPI: SearchGenerations
        /// The pictures' `Cache-Control: max-age`, in seconds; default the image host's 432,000.
        public var imageMaxAge = FixtureImages.maxAge

        /// - Precondition: `latency >= 0`, `failRate` in 0…1, `blockAfter` not negative,
        ///   `blockSeconds >= 0`.
        public init(
            latency: Double = 0, failRate: Double = 0, blockAfter: Int? = nil, blockSeconds: Double = 60,
            seed: UInt64 = 1, searchAPI: SearchGenerations = .both
        ) {
            precondition(latency >= 0, "latency must not be negative")
            precondition((0...1).contains(failRate), "failRate must be within 0…1")
            precondition((blockAfter ?? 0) >= 0, "blockAfter must not be negative")
            precondition(blockSeconds >= 0, "blockSeconds must not be negative")
            self.latency = latency
            self.failRate = failRate
            self.blockAfter = blockAfter
            self.blockSeconds = blockSeconds
            self.seed = seed
            self.searchAPI = searchAPI
        }
    }

    /// Where the answers come from.
    public let archive: FixtureArchive
    /// The image host's pictures for the archive's records.
    public let images: FixtureImages
    /// The misbehaviour settings, fixed for the fake's lifetime.
    public let options: Options
    private let time: any TimeSource
    private let compress: @Sendable ([UInt8]) -> [UInt8]
    private let state: Locked<State>
    /// The body of v1 search's 410 when `options.searchAPI` is `.v1_1`.
    private let retiredSearchBody: [UInt8]
    /// Records marked changed through `changePath`, by ID (see `FakeMet+Changes.swift`).
    let changes = Locked<[Int: Change]>([:])

    /// The path whose requests report the counters instead of being counted.
    public static let statsPath = "/__stats"
    /// Where, inside the fixture directory, the 410 body of the retired v1 search is kept.
    public static let retiredSearchFile = "errors/v1-search-retired.json"

    /// - Parameters:
    ///   - archive: the data to serve; with `options.searchAPI == .v1_1`, v1 search answers with
    ///     the body of `retiredSearchFile` in its directory (read here, once; a short notice of
    ///     the same shape when the file is missing).
    ///   - options: latency, failures, blocking and the search generations.
    ///   - time: the clock for block windows (seconds since 1970).
    ///   - compress: gzip encoder used when a request's `Accept-Encoding` mentions gzip
    ///     (`Gzip.compress` in the server; tests may pass the identity).
    public init(
        archive: FixtureArchive, options: Options, time: any TimeSource,
        compress: @escaping @Sendable ([UInt8]) -> [UInt8]
    ) {
        self.archive = archive
        images = FixtureImages(archive: archive)
        self.options = options
        self.time = time
        self.compress = compress
        state = Locked(State(random: options.seed))
        let retiredPath = archive.directory + "/" + Self.retiredSearchFile
        if options.searchAPI == .v1_1, let saved = FileManager.default.contents(atPath: retiredPath) {
            retiredSearchBody = [UInt8](saved)
        } else {
            var json = JSONWriter()
            json.beginObject()
            json.member("message", string: "\(FixtureArchive.searchV1) was retired on 2026-10-01.")
            json.member("replacement", string: FixtureArchive.searchV11)
            json.endObject()
            retiredSearchBody = json.bytes
        }
    }

    /// Answers at once when there is no latency to simulate (and always for `/__stats`);
    /// otherwise suspends for `options.latency` seconds (cut short if the task is cancelled), then
    /// answers. Runs on a loop thread: a search over many synthetic records costs milliseconds of
    /// CPU here.
    ///
    /// Pictures (`/CRDImages/…`) are always answered in a task: the first request for one makes it
    /// (`FixtureImages`, on a thread of its own), and the answer follows.
    public func respond(to request: Request) -> Answer {
        let isImage = request.target.hasPrefix(Self.imagePrefix)
        guard options.latency > 0 || isImage, !Self.isStats(request), !Self.isChange(request) else {
            return .ready(answer(request))
        }
        return .suspended(
            Suspension { [self] in
                if options.latency > 0 {
                    state.withLock { $0.waiting += 1 }
                    try? await Task.sleep(for: .seconds(options.latency))
                    state.withLock { $0.waiting -= 1 }
                }
                return answer(request, picture: isImage ? await picture(for: request) : nil)
            })
    }

    /// The picture a request for the image host names (nil for a path it does not hold), or why
    /// libvips could not make it.
    private func picture(for request: Request) async -> Result<FixtureImages.Image?, VipsError> {
        let path = (try? RequestTarget(parsing: request.target))?.path ?? ""
        do { return .success(try await images.image(at: path)) } catch { return .failure(error) }
    }

    /// Where the image host's paths begin.
    static let imagePrefix = "/CRDImages/"

    // MARK: Answering

    /// What the firewall and the fault injector decided for one request.
    private enum Verdict {
        case blocked
        case failed
        case served
    }

    /// The one place that answers: counts, applies block and failure, then routes. `picture` is
    /// what `picture(for:)` found for a request of the image host's.
    private func answer(_ request: Request, picture: Result<FixtureImages.Image?, VipsError>? = nil) -> Response {
        if Self.isStats(request) { return statsResponse() }
        if Self.isChange(request) { return changeResponse(request, at: time.now()) }
        let target = try? RequestTarget(parsing: request.target)
        let path = target?.path ?? String(request.target.prefix { $0 != "?" })
        let now = time.now()
        let (verdict, serial) = state.withLock { state in
            state.total += 1
            state.paths[path, default: 0] += 1
            if state.arrivals.count < State.arrivalBound { state.arrivals.append(now) }
            return (decide(&state, now: now), state.total)
        }

        switch verdict {
        case .blocked:
            let incident = "\(Self.incidentPrefix)-\(Self.token(options.seed, serial))"
            return decorate(
                status: 403, contentType: "text/html", body: Array(Self.blockPage(incident: incident).utf8),
                request: request, serial: serial)
        case .failed:
            return decorate(
                status: 503, contentType: "text/html", body: Array(Self.unavailablePage.utf8), request: request,
                serial: serial)
        case .served:
            break
        }

        switch request.method {
        case "GET":
            break
        case "HEAD" where path.hasPrefix(Self.imagePrefix):
            break  // the image host answers HEAD; the API answers 405
        case "OPTIONS":
            // A CORS preflight, as the Met answers it.
            var extra = HTTPFields()
            extra.append("Access-Control-Allow-Methods", "GET, OPTIONS")
            return decorate(status: 204, contentType: nil, body: [], request: request, serial: serial, extra: extra)
        default:
            var extra = HTTPFields()
            extra.append("Allow", "OPTIONS, GET")
            return decorate(status: 405, contentType: nil, body: [], request: request, serial: serial, extra: extra)
        }
        guard let target else {
            let reply = UpstreamReply(
                status: 400, contentType: FixtureArchive.contentType, body: Array(#"{"message":"Bad Request"}"#.utf8))
            return decorate(reply, request: request, serial: serial)
        }
        if target.path.hasPrefix(Self.imagePrefix) {
            let missing = VipsError(operation: "fixture", message: "no picture was looked up for this request")
            return imageResponse(picture ?? .failure(missing), request: request, serial: serial)
        }
        if let refusal = searchRefusal(path: target.path) {
            return decorate(refusal, request: request, serial: serial)
        }
        let reply = revised(
            archive.answer(path: target.path, query: target.query), path: target.path, query: target.query)
        return decorate(reply, request: request, serial: serial)
    }

    /// The answer of a search generation this fake is told not to have: v1.1 absent (404, like
    /// any unknown path), or v1 retired (410 with the Met's notice). Nil for everything else.
    private func searchRefusal(path: String) -> UpstreamReply? {
        switch (options.searchAPI, path) {
        case (.v1, FixtureArchive.searchV11):
            var json = JSONWriter()
            json.beginObject()
            json.member("message", string: "Not Found")
            json.endObject()
            return UpstreamReply(status: 404, contentType: FixtureArchive.contentType, body: json.bytes)
        case (.v1_1, FixtureArchive.searchV1):
            return UpstreamReply(status: 410, contentType: FixtureArchive.contentType, body: retiredSearchBody)
        default:
            return nil
        }
    }

    /// Applies the block window and the failure draw to one counted request. Called under the lock.
    private func decide(_ state: inout State, now: Double) -> Verdict {
        if let until = state.blockedUntil {
            if now < until {
                state.blocked += 1
                return .blocked
            }
            state.blockedUntil = nil
            state.windowCount = 0
        }
        if let limit = options.blockAfter {
            if state.windowCount >= limit {
                state.blockedUntil = now + options.blockSeconds
                state.blocked += 1
                return .blocked
            }
            state.windowCount += 1
        }
        if options.failRate > 0 && state.nextUnit() < options.failRate {
            state.failed += 1
            return .failed
        }
        return .served
    }

    private func decorate(_ reply: UpstreamReply, request: Request, serial: Int) -> Response {
        decorate(
            status: reply.status, contentType: reply.contentType, body: reply.body, request: request, serial: serial)
    }

    /// Adds what every Met answer carries: Imperva headers and cookies, CORS, gzip when asked,
    /// chunked transfer. Never `Cache-Control`, `ETag` or `Last-Modified`.
    private func decorate(
        status: Int, contentType: String?, body: [UInt8], request: Request, serial: Int,
        extra: HTTPFields = HTTPFields()
    ) -> Response {
        var headers = HTTPFields()
        if let contentType { headers.append("Content-Type", contentType) }
        var body = body
        if !body.isEmpty, let accepted = request.headers["Accept-Encoding"], accepted.lowercased().contains("gzip") {
            body = compress(body)
            headers.append("Content-Encoding", "gzip")
        }
        headers.append("Vary", "Origin")
        headers.append("Access-Control-Allow-Origin", "*")
        for field in extra { headers.append(field.name, field.value) }
        appendFirewallFields(to: &headers, serial: serial)
        var response = Response(status: status, headers: headers, body: body)
        response.isChunked = true
        return response
    }

    /// A picture as the image host sends it (docs/MET-API.md §1, §7): its length, its lifetime and
    /// validators, a 304 for a matching `If-None-Match` (or, without one, an `If-Modified-Since`
    /// equal to its `Last-Modified`), no CORS, no gzip; a 404 page for a path it does not hold, a 500 when
    /// libvips fails.
    private func imageResponse(
        _ picture: Result<FixtureImages.Image?, VipsError>, request: Request, serial: Int
    ) -> Response {
        var headers = HTTPFields()
        let image: FixtureImages.Image
        do {
            guard let found = try picture.get() else {
                headers.append("Content-Type", "text/html")
                appendFirewallFields(to: &headers, serial: serial)
                return Response(status: 404, headers: headers, body: Array("<html><body>Not Found</body></html>".utf8))
            }
            image = found
        } catch {
            headers.append("Content-Type", "text/plain")
            return Response(status: 500, headers: headers, body: Array("\(error)".utf8))
        }
        headers.append("Cache-Control", "max-age=\(options.imageMaxAge)")
        headers.append("ETag", image.etag)
        headers.append("Last-Modified", image.lastModified)
        headers.append("Accept-Ranges", "bytes")
        appendFirewallFields(to: &headers, serial: serial)
        let unchanged: Bool
        if let tags = request.headers["If-None-Match"] {
            unchanged = ETag.ifNoneMatch(tags, matches: image.etag)
        } else {
            unchanged = request.headers["If-Modified-Since"] == image.lastModified
        }
        if unchanged {
            state.withLock { $0.notModified += 1 }
            return Response(status: 304, headers: headers)
        }
        headers.append("Content-Type", image.contentType)
        return Response(status: 200, headers: headers, body: image.bytes)
    }

    /// The Imperva cookies and fields every answer of both hosts carries.
    private func appendFirewallFields(to headers: inout HTTPFields, serial: Int) {
        headers.append(
            "Set-Cookie",
            "visid_incap_\(Self.siteID)=\(Self.token(options.seed, serial)); "
                + "expires=Fri, 31 Dec 2027 23:59:59 GMT; HttpOnly; path=/; Domain=.metmuseum.org")
        headers.append(
            "Set-Cookie",
            "incap_ses_\(Self.nodeID)_\(Self.siteID)=\(Self.token(options.seed &+ 1, serial)); path=/; "
                + "Domain=.metmuseum.org")
        headers.append("X-CDN", "Imperva")
        headers.append("X-Iinfo", "14-\(serial)-0 0NNN RT(0 0) q(0 -1 -1 -1) r(0 -1)")
    }

    /// `{"total":N,"waiting":W,"blocked":B,"failed":F,"notModified":M,"paths":{…},"arrivals":[…]}`,
    /// paths sorted.
    /// Not counted, never blocked.
    private func statsResponse() -> Response {
        let (total, waiting, blocked, failed, notModified, paths, arrivals) = state.withLock {
            ($0.total, $0.waiting, $0.blocked, $0.failed, $0.notModified, $0.paths, $0.arrivals)
        }
        var json = JSONWriter()
        json.beginObject()
        json.member("total", int: total)
        json.member("waiting", int: waiting)
        json.member("blocked", int: blocked)
        json.member("failed", int: failed)
        json.member("notModified", int: notModified)
        json.key("paths")
        json.beginObject()
        for (path, count) in paths.sorted(by: { $0.key < $1.key }) { json.member(path, int: count) }
        json.endObject()
        json.key("arrivals")
        json.beginArray()
        for arrival in arrivals { json.double(arrival) }
        json.endArray()
        json.endObject()
        var headers = HTTPFields()
        headers.append("Content-Type", FixtureArchive.contentType)
        return Response(status: 200, headers: headers, body: json.bytes)
    }

    private static func isStats(_ request: Request) -> Bool {
        request.target == statsPath || request.target.hasPrefix(statsPath + "?")
    }

    // MARK: Imperva look-alikes

    private static let siteID = 1_662_004
    private static let nodeID = 1_364
    private static let incidentPrefix = "877000120"

    /// A cookie or incident token: a hex string that is a pure function of seed and request number.
    private static func token(_ seed: UInt64, _ serial: Int) -> String {
        var generator = SplitMix64(seed: seed ^ UInt64(truncatingIfNeeded: serial) &* 0x9E37_79B9_7F4A_7C15)
        return String(generator.next(), radix: 16) + String(generator.next(), radix: 16)
    }

    private static func blockPage(incident: String) -> String {
        """
        <html style="height:100%"><head><META NAME="ROBOTS" CONTENT="NOINDEX, NOFOLLOW">\
        <meta name="format-detection" content="telephone=no"><meta name="viewport" content="initial-scale=1.0">\
        </head><body style="margin:0px;height:100%"><iframe id="main-iframe" \
        src="/_Incapsula_Resource?SWUDNSAI=31&xinfo=14-0-0%200NNN&incident_id=\(incident)&edet=15" \
        frameborder=0 width="100%" height="100%" marginheight="0px" marginwidth="0px">\
        Request unsuccessful. Incapsula incident ID: \(incident)</iframe></body></html>
        """
    }

    private static let unavailablePage =
        "<html><head><title>503 Service Unavailable</title></head>"
        + "<body><h1>503 Service Unavailable</h1><p>The service is temporarily unavailable.</p></body></html>"

    // MARK: State

    /// Everything that changes per request; only touched under `state`'s lock.
    private struct State {
        /// Requests counted (everything but `/__stats`), blocked and failed ones included.
        var total = 0
        /// Requests received and not yet counted: waiting out `options.latency`. What a test that
        /// needs its requests to be in the fake's hands (not queued on the way) waits for.
        var waiting = 0
        /// Requests answered with the firewall's 403.
        var blocked = 0
        /// Requests answered with the injected 503.
        var failed = 0
        /// Picture requests answered 304 Not Modified.
        var notModified = 0
        /// Counted requests per decoded path (no query).
        var paths: [String: Int] = [:]
        /// When each request was counted (seconds since 1970, after the latency), the first
        /// `arrivalBound` of them: what a test of pacing checks against its budget.
        var arrivals: [Double] = []
        static let arrivalBound = 10_000
        /// Requests let through since the window opened.
        var windowCount = 0
        /// When the current block ends (seconds since 1970), or nil when not blocked.
        var blockedUntil: Double?
        /// Decides which requests fail.
        var random: SplitMix64

        init(random seed: UInt64) { random = SplitMix64(seed: seed) }

        /// A uniform draw in [0, 1).
        mutating func nextUnit() -> Double { Double(random.next() >> 11) * 0x1p-53 }
    }
}
