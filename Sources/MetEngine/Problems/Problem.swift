/// A client-facing error, rendered as an RFC 9457 problem document:
/// `{"type", "title", "status", "detail", "code"}` plus optional extension members.
public struct Problem: Error, Sendable, Equatable {
    /// The stable snake_case code clients switch on (a `ProblemCode`'s raw value, or a code of
    /// the HTTP layer's own); fixes `type`, `title` and `status`.
    public var code: String
    /// The HTTP status that goes with the code.
    public var status: Int
    /// The code's short, fixed summary (RFC 9457 `title`).
    public var title: String
    /// What went wrong in this instance, for a person to read.
    public var detail: String
    /// The query parameter at fault, when there is one (rendered as `parameter`).
    public var parameter: String?
    /// Extra response header fields (`Allow` on a 405, `Retry-After` on a 503).
    public var headers: HTTPFields

    public init(_ code: ProblemCode, _ detail: String, parameter: String? = nil, headers: HTTPFields = HTTPFields()) {
        self.init(code: code.rawValue, status: code.status, title: code.title, detail: detail)
        self.parameter = parameter
        self.headers = headers
    }

    /// A problem with a code defined outside the core (the HTTP layer's), rendered the same way.
    /// The caller keeps each code's status and title fixed, as `ProblemCode` does.
    public init(code: String, status: Int, title: String, detail: String) {
        self.code = code
        self.status = status
        self.title = title
        self.detail = detail
        parameter = nil
        headers = HTTPFields()
    }

    /// The problem's `type` URI: stable, one per code.
    public var type: String { "urn:themet:problem:\(code)" }

    /// The JSON document, members in a fixed order.
    public var body: [UInt8] {
        var json = JSONWriter()
        json.beginObject()
        json.member("type", string: type)
        json.member("title", string: title)
        json.member("status", int: status)
        json.member("detail", string: detail)
        json.member("code", string: code)
        if let parameter { json.member("parameter", string: parameter) }
        json.endObject()
        return json.bytes
    }

    /// The complete response: status, `Content-Type: application/problem+json`, extra headers, body.
    /// Problems are never cached by clients (`Cache-Control: no-store`), except a 404 for an object,
    /// which the route gives its own cache headers.
    public var response: Response {
        var fields = headers
        fields.set("Content-Type", Response.problemContentType)
        if fields["Cache-Control"] == nil { fields.set("Cache-Control", "no-store") }
        return Response(status: status, headers: fields, body: body)
    }

    /// `response` with `"requestId": requestID` added to its body when it is a problem document
    /// (an error status with `Content-Type: application/problem+json`), so that a client can
    /// quote the ID the access log holds. Any other response, or a nil ID, is returned as it is.
    /// A problem with an `ETag` (a cached 404) keeps it: the tag is weak, and the ID changes
    /// nothing a client compares.
    public static func identified(_ response: Response, requestID: String?) -> Response {
        guard let requestID, response.status >= 400, response.body.last == UInt8(ascii: "}"),
            response.headers["Content-Type"] == Response.problemContentType
        else { return response }
        var member = JSONWriter(capacity: 32)
        member.key("requestId")
        member.string(requestID)
        var identified = response
        identified.body.removeLast()
        identified.body.append(UInt8(ascii: ","))
        identified.body.append(contentsOf: member.bytes)
        identified.body.append(UInt8(ascii: "}"))
        return identified
    }
}
