import MetEngine
import Synchronization

/// The real Met API (or any server at the same paths, such as `met-fixture-server`) over
/// HTTP(S) with libcurl: keep-alive connections, TLS verified against the system's CA store,
/// gzip asked for and decoded by curl, redirects not followed, no cookies, explicit connect and
/// total timeouts, and a bound on the body (`maxBodyBytes`, on the wire and decoded).
///
/// Safe from any task. Cancelling the calling task abandons the transfer on curl's thread; a
/// cancel that races the answer is a no-op.
public final class CurlUpstream: Upstream {
    private let origin: String
    private let multi: CurlMulti
    private let nextID = Atomic<UInt64>(0)

    /// The `User-Agent` every request carries.
    static let userAgent = "TheMet-server/1.0 (caching proxy; polite pacing)"

    /// - Parameters:
    ///   - origin: scheme, host and optional port, without a trailing slash
    ///     (`https://collectionapi.metmuseum.org`).
    ///   - connectTimeout: seconds to open a connection, TLS included.
    ///   - timeout: seconds for one whole attempt, the body included.
    ///   - maxBodyBytes: the largest body accepted, as sent and after decoding; past it the
    ///     attempt fails with `.malformed` and what was received is released at once.
    ///   - accept: the `Accept` field every request sends (`application/json` for the API,
    ///     `image/*` for the image host).
    ///   - connections: the most calls the pacer lets out at once (`--upstream-concurrency`): as
    ///     many idle connections are kept for reuse, so that no call opens a new one while that
    ///     many run.
    /// - Throws: `CurlError` when libcurl or its loop cannot be set up.
    public init(
        origin: String, connectTimeout: Double, timeout: Double, maxBodyBytes: Int,
        accept: String = "application/json", connections: Int = 2
    ) throws(CurlError) {
        self.origin = origin
        multi = try CurlMulti(
            settings: CurlTransfer.Settings(
                connectTimeoutMilliseconds: Self.milliseconds(connectTimeout),
                totalTimeoutMilliseconds: Self.milliseconds(timeout), maxBodyBytes: maxBodyBytes),
            headers: ["Accept: \(accept)", CurlTransfer.acceptEncoding], connections: connections)
    }

    public var location: String { origin }

    public func get(
        path: String, query: [RequestTarget.QueryItem], conditions: UpstreamValidators?
    ) async throws(UpstreamError) -> UpstreamReply {
        let url = origin + UpstreamTarget.encode(path: path, query: query)
        var extraHeaders: [String] = []
        // Validators come from the upstream's own replies; one holding CR or LF is not sent.
        if let etag = conditions?.etag, Self.isFieldValue(etag) { extraHeaders.append("If-None-Match: \(etag)") }
        if let date = conditions?.lastModified, Self.isFieldValue(date) {
            extraHeaders.append("If-Modified-Since: \(date)")
        }
        let id = nextID.add(1, ordering: .relaxed).newValue
        let multi = self.multi
        let result = await withTaskCancellationHandler {
            await awaitDelivery { deliver in
                multi.start(id: id, url: url, extraHeaders: extraHeaders, deliver: deliver)
                // Cancelled before the handler was installed: the handler's cancel would have
                // run before the start above, found nothing and done nothing.
                if Task.isCancelled { multi.cancel(id) }
            }
        } onCancel: {
            multi.cancel(id)
        }
        return try result.get()
    }

    /// Whether `value` can be sent as a field value: no CR, LF or NUL, and not empty.
    private static func isFieldValue(_ value: String) -> Bool {
        !value.isEmpty && !value.utf8.contains { $0 == 13 || $0 == 10 || $0 == 0 }
    }

    /// Whole milliseconds, at least 1 (curl reads 0 as "no timeout").
    static func milliseconds(_ seconds: Double) -> Int {
        max(1, Int((seconds * 1_000).rounded(.up)))
    }
}
