import MetEngine

/// The problem codes only the HTTP layer answers with: for requests it cannot read, after which
/// the connection closes. Like `ProblemCode`'s, each keeps its string, status and title for good:
/// clients may switch on them.
enum HTTPProblemCode: String, CaseIterable {
    /// The bytes received are not an HTTP/1.x request (bad request line, header line or framing).
    case malformedRequest = "malformed_request"
    /// The client did not send its whole request within `--read-timeout`, or fell silent for
    /// `--idle-timeout` in the middle of it.
    case requestTimeout = "request_timeout"
    /// The request body uses a transfer coding other than chunked.
    case transferCodingNotSupported = "transfer_coding_not_supported"
    /// The request is not HTTP/1.x.
    case httpVersionNotSupported = "http_version_not_supported"

    /// The HTTP status that goes with the code.
    var status: Int {
        switch self {
        case .malformedRequest: 400
        case .requestTimeout: 408
        case .transferCodingNotSupported: 501
        case .httpVersionNotSupported: 505
        }
    }

    /// A short, fixed summary of the problem type (RFC 9457 `title`).
    var title: String {
        switch self {
        case .malformedRequest: "Malformed HTTP request"
        case .requestTimeout: "Request not received in time"
        case .transferCodingNotSupported: "Transfer coding not supported"
        case .httpVersionNotSupported: "HTTP version not supported"
        }
    }
}

extension Problem {
    /// A problem document with one of the HTTP layer's own codes.
    init(_ code: HTTPProblemCode, _ detail: String) {
        self.init(code: code.rawValue, status: code.status, title: code.title, detail: detail)
    }
}
