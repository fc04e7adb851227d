import MetEngine

/// `/images/{path}`: the image host's pictures through the pictures' tiers (`ImageEngine`). A
/// picture memory holds fresh (or within stale-while-revalidate, whose refresh starts) is answered
/// on the loop thread; anything else waits in a task for the fetcher: the picture files, the group,
/// then the image host, one fetch per picture whoever asks.
///
/// A picture goes out as the image host sent it, byte for byte, with its type as its bytes say,
/// a strong ETag of those bytes, the host's `Last-Modified`, the cache's `Cache-Control`, `Age`
/// and `Cache-Status`, and `Accept-Ranges`: `If-None-Match` (else `If-Modified-Since`) answers
/// 304, one `Range` 206 (when `If-Range` still names this picture) or 416. A picture of
/// `fileBodyThreshold` bytes or more goes out of its file with `sendfile` when the picture files
/// hold that version as it is sent (a `FileBody`); a smaller one, or one not on disk (yet), from
/// the bytes memory holds. Plain hits share one response a second, whichever way it is sent.
/// Any thread.
final class ImageHandler: Sendable {
    private let engine: ImageEngine
    private let time: any TimeSource
    /// `--client-queue`, for a 429's detail.
    private let clientLimit: Int
    /// The plain hits' shared responses: the pictures hit lately.
    private let hitResponses = HitResponseTable(sets: 256)

    init(engine: ImageEngine, time: any TimeSource, clientLimit: Int) {
        self.engine = engine
        self.time = time
        self.clientLimit = clientLimit
    }

    /// The answer to a request for the picture at `path`, on the loop thread.
    func answer(_ path: ImagePath, for request: RouteRequest) -> Answer {
        let resource = engine.resource(path.path)
        if let (held, outcome) = engine.fetcher.fromMemory(resource, claim: request.claim) {
            let now = time.now()
            let response: Response
            if outcome == .hit, Self.isPlain(request.request) {
                // A plain hit: made once a second, then shared. A file body opens its file as each
                // copy is sent, so the shared response holds no descriptor.
                let second = Int(now.rounded(.down))
                response = hitResponses.response(
                    for: held.serial, second: second, age: second - held.fetchedSecond,
                    ttl: Int((held.freshUntil - now).rounded(.down)), gzip: false
                ) { Self.present(held, outcome: .hit, to: request.request, at: now, engine: engine) }
            } else {
                response = Self.present(held, outcome: outcome, to: request.request, at: now, engine: engine)
            }
            return .ready(response)
        }
        let claim = request.claim
        let request = request.request
        return .suspended(
            Suspension { [engine, time, clientLimit] in
                switch await engine.fetcher.lookUp(resource, claim: claim) {
                case .entry(let entry, let outcome):
                    return Self.present(entry, outcome: outcome, to: request, at: time.now(), engine: engine)
                case .failed(let error):
                    return Self.problem(
                        for: error, fetching: resource.path, engine: engine, clientLimit: clientLimit, at: time.now())
                case .cancelled, .pending:
                    return Response(status: 499)
                }
            })
    }

    /// The problem for a failure to fetch `path` from the image host.
    static func problem(
        for error: UpstreamError, fetching path: String, engine: ImageEngine, clientLimit: Int, at now: Double
    ) -> Response {
        Presenter.problem(
            for: error, fetching: path, from: "the Met's image host", monitor: engine.monitor, clientLimit: clientLimit,
            at: now
        ).response
    }

    /// Pictures of at least this many bytes are sent from their files when the picture files hold
    /// them: below it, writing the bytes memory holds costs less than opening the file.
    static let fileBodyThreshold = 64 * 1_024

    /// The response for `entry` to `request`, as of `now` (see the type's comment); `engine`'s
    /// picture files may send its body.
    static func present(
        _ entry: CacheEntry, outcome: CacheOutcome, to request: Request, at now: Double, engine: ImageEngine
    ) -> Response {
        var headers = HTTPFields(capacity: 12)
        headers.append("Cache-Control", Presenter.cacheControl(entry, at: now))
        headers.append("Age", String(max(0, Int(now.rounded(.down)) - entry.fetchedSecond)))
        let ttl = Int((entry.freshUntil - now).rounded(.down))
        headers.append("Cache-Status", Presenter.cacheStatus(outcome, ttl: ttl))
        guard entry.status == 200, case .image(let details) = entry.details else {
            var problem = Problem(.imageNotFound, "The Met's image host has no picture at \(entry.key).")
            problem.headers = headers
            var response = problem.response
            response.cacheOutcome = outcome
            return response
        }
        headers.append("ETag", entry.etag)
        if let lastModified = details.upstream.lastModified { headers.append("Last-Modified", lastModified) }
        headers.append("Accept-Ranges", "bytes")
        if isUnchanged(entry, details, request) {
            var notModified = Response(status: 304, headers: headers, cacheOutcome: outcome)
            notModified.date = entry.fetchedDate
            return notModified
        }
        let length = entry.body.count
        var response: Response
        if let range = requestedRange(entry, details, request) {
            guard let bytes = range.resolved(length: length) else {
                headers.append("Content-Range", "bytes */\(length)")
                var problem = Problem(
                    .rangeNotSatisfiable, "The picture has \(length) bytes; the Range asked for none of them.")
                problem.headers = headers
                response = problem.response
                response.cacheOutcome = outcome
                return response
            }
            headers.append("Content-Type", details.contentType)
            headers.append("Content-Range", "bytes \(bytes.lowerBound)-\(bytes.upperBound)/\(length)")
            response = Response(status: 206, headers: headers, cacheOutcome: outcome)
            setBody(of: &response, to: entry, Range(bytes), for: request, engine: engine)
        } else {
            headers.append("Content-Type", details.contentType)
            response = Response(status: 200, headers: headers, cacheOutcome: outcome)
            setBody(of: &response, to: entry, 0..<length, for: request, engine: engine)
        }
        response.date = entry.fetchedDate
        return response
    }

    /// Makes `bytes` of `entry`'s body the body of `response`: a file body when the picture is large,
    /// there are picture files and the body is sent (not for HEAD); else the bytes memory holds.
    private static func setBody(
        of response: inout Response, to entry: CacheEntry, _ bytes: Range<Int>, for request: Request,
        engine: ImageEngine
    ) {
        if entry.body.count >= fileBodyThreshold, request.method != "HEAD",
            let file = engine.fileBody(of: entry, bytes)
        {
            response.fileBody = file
        } else {
            response.body = bytes.count == entry.body.count ? entry.body : Array(entry.body[bytes])
        }
    }

    /// A GET of the whole picture, unconditional: its answer is the same for every such request.
    static func isPlain(_ request: Request) -> Bool {
        request.method == "GET" && request.headers["If-None-Match"] == nil
            && request.headers["If-Modified-Since"] == nil && request.headers["Range"] == nil
    }

    /// RFC 9110 §13.2.2's order: `If-None-Match` decides when present (weak comparison); else an
    /// `If-Modified-Since` equal to the picture's `Last-Modified` (the value a client got from it).
    private static func isUnchanged(_ entry: CacheEntry, _ details: ImageDetails, _ request: Request) -> Bool {
        if let tags = request.headers["If-None-Match"] { return ETag.ifNoneMatch(tags, matches: entry.etag) }
        guard let since = request.headers["If-Modified-Since"], let lastModified = details.upstream.lastModified else {
            return false
        }
        return since == lastModified
    }

    /// The range to send, when the request asks for one and its `If-Range` (if any) still names
    /// this picture: its strong ETag exactly, or its `Last-Modified` date exactly (§13.1.5).
    private static func requestedRange(_ entry: CacheEntry, _ details: ImageDetails, _ request: Request) -> ByteRange? {
        guard let value = request.headers["Range"], let range = ByteRange(value) else { return nil }
        if let condition = request.headers["If-Range"] {
            let trimmed = String(Substring(condition).trimmingSpaces())
            let current = trimmed.hasPrefix("\"") ? entry.etag : details.upstream.lastModified
            guard trimmed == current else { return nil }
        }
        return range
    }
}
