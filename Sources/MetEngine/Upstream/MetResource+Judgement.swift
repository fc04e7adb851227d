import Foundation

/// An upstream answer the cache can keep: a validated 200, or a Met 404 (negative entry).
public struct CacheableAnswer: Sendable, Equatable {
    /// 200 or 404.
    public var status: Int
    /// The Met's body, byte for byte.
    public var body: [UInt8]
    /// For a 404, the Met's `message` (`ObjectID not found` or `Not a valid object`).
    public var message: String? = nil
    /// For a 200, what validating the body read from it (an object's summary, an ID list).
    public var details: EntryDetails = .none
    /// The upstream's gzip encoding of `body`, when it sent one (`UpstreamReply.gzipped`).
    public var gzipped: [UInt8]? = nil
}

/// How the API's replies are judged: 200 bodies validated (the JSON the resource returns), the
/// Met's 404s for objects kept (both messages), the firewall's 403 HTML page read as "blocked",
/// everything else an `UpstreamError`.
extension MetResource: UpstreamRequest {
    public func judge(_ reply: UpstreamReply) -> Result<CacheableAnswer, UpstreamError> {
        switch reply.status {
        case 200:
            return Self.details(of: reply.body, for: self).map {
                CacheableAnswer(status: 200, body: reply.body, details: $0, gzipped: reply.gzipped)
            }
        case 404 where kind == .object:
            guard let error = try? JSONDecoder().decode(MessageBody.self, from: Data(reply.body)) else {
                return .failure(.malformed("404 without a JSON message"))
            }
            return .success(CacheableAnswer(status: 404, body: reply.body, message: error.message))
        case 403 where reply.looksLikeHTML:
            return .failure(.blocked)
        default:
            return .failure(.status(reply.status))
        }
    }

    public static func outcome(of answer: CacheableAnswer) -> UpstreamOutcome {
        answer.status == 404 ? .notFound : .ok
    }

    public static func logSummary(of answer: CacheableAnswer) -> String {
        "\(answer.status), \(answer.body.count) bytes"
    }

    /// Validates a 200 body for `resource` and returns what it holds; one decoding serves both
    /// (the details are kept in the cache entry). `.malformed` when the body is not what the
    /// resource returns.
    package static func details(of body: [UInt8], for resource: MetResource) -> Result<EntryDetails, UpstreamError> {
        let details = EntryDetails.read(body, kind: resource.kind)
        switch (resource, details) {
        case (.object(let id), .object(let summary)):
            guard summary.objectID == id else {
                return .failure(.malformed("asked for object \(id), got \(summary.objectID)"))
            }
            return .success(details)
        case (.objectList, .ids), (.search, .ids):
            return .success(details)
        case (.departments, _):
            guard (try? JSONDecoder().decode(DepartmentsProbe.self, from: Data(body))) != nil else { break }
            return .success(details)
        default:
            break
        }
        return .failure(.malformed("body is not the expected JSON (\(body.count) bytes)"))
    }

    private struct DepartmentsProbe: Decodable {
        struct Department: Decodable {
            let departmentId: Int
            let displayName: String
        }
        let departments: [Department]
    }

    /// The Met's error body, `{"message": "…"}`.
    private struct MessageBody: Decodable { let message: String }
}

extension UpstreamReply {
    /// An HTML page (by its type, or by its first byte): what the firewall sends in a 403.
    package var looksLikeHTML: Bool {
        if let type = contentType?.lowercased(), type.contains("html") { return true }
        let start = body.drop { $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }.first
        return start == UInt8(ascii: "<")
    }
}
