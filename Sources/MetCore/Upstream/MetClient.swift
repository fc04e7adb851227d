import Foundation

/// An upstream answer the cache can keep: a validated 200, or a Met 404 (negative entry).
public struct CacheableAnswer: Sendable, Equatable {
    /// 200 or 404.
    public var status: Int
    /// The Met's body, byte for byte.
    public var body: [UInt8]
    /// For a 404, the Met's `message` (`ObjectID not found` or `Not a valid object`).
    public var message: String? = nil
}

/// Calls the upstream for a `MetResource` and judges the answer: validates 200 bodies, keeps the
/// Met's 404s (both messages) as cacheable answers, treats the firewall's 403 HTML page as
/// "blocked", and turns everything else into an `UpstreamError`. Records every call in the monitor.
public struct MetClient: Sendable {
    private let upstream: any Upstream
    private let monitor: UpstreamMonitor
    private let time: any TimeSource
    private let logger: Logger

    /// - Parameter configuration: the upstream policy (pace, retries, deadlines) is read from it.
    public init(
        configuration: ServerConfiguration, upstream: any Upstream, monitor: UpstreamMonitor, time: any TimeSource,
        logger: Logger
    ) {
        self.upstream = upstream
        self.monitor = monitor
        self.time = time
        self.logger = logger
    }

    /// Fetches `resource` once (no retries). While the upstream is blocking this server, fails
    /// with `.blocked` without calling it.
    public func fetch(_ resource: MetResource) async -> Result<CacheableAnswer, UpstreamError> {
        if monitor.blockedUntil(at: time.now()) != nil { return .failure(.blocked) }
        let reply: UpstreamReply
        do {
            reply = try await upstream.get(path: resource.path, query: resource.query)
        } catch {
            record(error, for: resource)
            return .failure(error)
        }
        let result = judge(reply, for: resource)
        switch result {
        case .success(let answer): monitor.record(answer.status == 404 ? .notFound : .ok, at: time.now())
        case .failure(let error): record(error, for: resource)
        }
        return result
    }

    /// Classifies one reply. Pure: no I/O, no state.
    func judge(_ reply: UpstreamReply, for resource: MetResource) -> Result<CacheableAnswer, UpstreamError> {
        switch reply.status {
        case 200:
            if let problem = Self.validationProblem(reply.body, for: resource) { return .failure(.malformed(problem)) }
            return .success(CacheableAnswer(status: 200, body: reply.body))
        case 404 where resource.kind == .object:
            guard let error = try? JSONDecoder().decode(MessageBody.self, from: Data(reply.body)) else {
                return .failure(.malformed("404 without a JSON message"))
            }
            return .success(CacheableAnswer(status: 404, body: reply.body, message: error.message))
        case 403 where Self.looksLikeHTML(reply):
            return .failure(.blocked)
        default:
            return .failure(.status(reply.status))
        }
    }

    private func record(_ error: UpstreamError, for resource: MetResource) {
        let now = time.now()
        let text = "\(resource.path): \(error.logDescription)"
        switch error {
        case .unreachable: monitor.record(.unreachable, at: now, error: text)
        case .timeout: monitor.record(.timeout, at: now, error: text)
        case .blocked: monitor.record(.blocked, at: now, error: text)
        case .status(let code): monitor.record(code >= 500 ? .serverError : .clientError, at: now, error: text)
        case .malformed: monitor.record(.malformed, at: now, error: text)
        case .cancelled: monitor.record(.cancelled, at: now)
        }
        if error != .cancelled { logger.warning("upstream \(text)") }
    }

    /// Why `body` is not what `resource` should return, or nil when it is.
    static func validationProblem(_ body: [UInt8], for resource: MetResource) -> String? {
        let decoder = JSONDecoder()
        let data = Data(body)
        do {
            switch resource {
            case .object(let id):
                let record = try decoder.decode(ObjectProbe.self, from: data)
                if record.objectID != id { return "asked for object \(id), got \(record.objectID)" }
            case .objectList:
                _ = try decoder.decode(ObjectListProbe.self, from: data)
            case .departments:
                _ = try decoder.decode(DepartmentsProbe.self, from: data)
            }
            return nil
        } catch {
            return "body is not the expected JSON (\(body.count) bytes)"
        }
    }

    private static func looksLikeHTML(_ reply: UpstreamReply) -> Bool {
        if let type = reply.contentType?.lowercased(), type.contains("html") { return true }
        let start = reply.body.drop { $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }.first
        return start == UInt8(ascii: "<")
    }

    private struct ObjectProbe: Decodable { let objectID: Int }
    private struct ObjectListProbe: Decodable {
        let total: Int
        let objectIDs: [Int]?
    }
    private struct DepartmentsProbe: Decodable {
        struct Department: Decodable {
            let departmentId: Int
            let displayName: String
        }
        let departments: [Department]
    }
    /// The Met's error body, `{"message": "…"}`.
    struct MessageBody: Decodable { let message: String }
}

extension UpstreamError {
    /// One line for the log and for problem `detail`s.
    public var logDescription: String {
        switch self {
        case .unreachable(let reason): "unreachable (\(reason))"
        case .timeout: "timed out"
        case .blocked: "blocked by the firewall (403 HTML page)"
        case .status(let code): "answered HTTP \(code)"
        case .malformed(let reason): "malformed answer: \(reason)"
        case .cancelled: "cancelled"
        }
    }
}
