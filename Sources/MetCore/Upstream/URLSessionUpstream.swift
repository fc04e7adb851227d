import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The real Met API (or any server at the same paths, such as `met-fixture-server`) over
/// HTTP(S) with URLSession. Upstream cookies are never stored or sent, nothing is cached by
/// URLSession, and gzip bodies are decoded by libcurl.
public final class URLSessionUpstream: Upstream {
    private let origin: String
    private let session: URLSession

    /// - Parameters:
    ///   - origin: scheme, host and optional port, without a trailing slash
    ///     (`https://collectionapi.metmuseum.org`).
    ///   - timeout: seconds to wait for one whole answer.
    ///   - maxConnections: the most parallel connections to the host; keep it at least the
    ///     pacer's concurrency (`--upstream-concurrency`), or calls the pacer let through would
    ///     queue inside URLSession, where their time counts against their timeout.
    public init(origin: String, timeout: Double, maxConnections: Int = 16) {
        self.origin = origin
        let configuration = URLSessionConfiguration.ephemeral
        configuration.urlCache = nil
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.httpCookieStorage = nil
        configuration.httpShouldSetCookies = false
        configuration.httpCookieAcceptPolicy = .never
        configuration.httpMaximumConnectionsPerHost = maxConnections
        configuration.timeoutIntervalForRequest = timeout
        configuration.timeoutIntervalForResource = timeout
        configuration.httpAdditionalHeaders = [
            "Accept": "application/json",
            "User-Agent": "TheMet-server/1.0 (caching proxy; polite pacing)",
        ]
        session = URLSession(configuration: configuration)
    }

    public var location: String { origin }

    public func get(path: String, query: [RequestTarget.QueryItem]) async throws(UpstreamError) -> UpstreamReply {
        var components = URLComponents(string: origin + path)
        if !query.isEmpty {
            components?.percentEncodedQuery = query.map { "\(Self.encode($0.name))=\(Self.encode($0.value))" }
                .joined(separator: "&")
        }
        guard let url = components?.url else { throw .unreachable("cannot form a URL from \(origin)\(path)") }
        do {
            let (data, response) = try await fetch(URLRequest(url: url))
            guard let http = response as? HTTPURLResponse else { throw UpstreamError.unreachable("not an HTTP answer") }
            return UpstreamReply(
                status: http.statusCode,
                contentType: http.value(forHTTPHeaderField: "Content-Type"),
                body: [UInt8](data))
        } catch let error as UpstreamError {
            throw error
        } catch let error as URLError {
            switch error.code {
            case .timedOut: throw .timeout
            case .cancelled: throw .cancelled
            default: throw .unreachable(error.localizedDescription)
            }
        } catch {
            if Task.isCancelled { throw .cancelled }
            throw .unreachable(String(describing: error))
        }
    }

    /// One request through a data task. Not `URLSession.data(for:)`: its cancellation handler
    /// calls `URLSessionTask.cancel()`, which waits on the session's queue while holding the Swift
    /// task's status lock, and the session's queue may at that moment be resuming the same task,
    /// which needs that lock: both threads hang for good (seen when clients hang up under load).
    /// Here the cancel is handed to another queue, so the canceller never waits.
    private func fetch(_ request: URLRequest) async throws -> (Data, URLResponse?) {
        let started = Locked<URLSessionDataTask?>(nil)
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let task = session.dataTask(with: request) { data, response, error in
                    if let error {
                        continuation.resume(throwing: error)
                    } else {
                        continuation.resume(returning: (data ?? Data(), response))
                    }
                }
                started.withLock { $0 = task }
                task.resume()
                if Task.isCancelled { DispatchQueue.global().async { task.cancel() } }
            }
        } onCancel: {
            if let task = started.withLock({ $0 }) { DispatchQueue.global().async { task.cancel() } }
        }
    }

    /// Percent-encodes a query name or value: everything but unreserved characters and `|`,
    /// which the Met's own examples send as is.
    private static func encode(_ text: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~|")
        return text.addingPercentEncoding(withAllowedCharacters: allowed) ?? text
    }
}
