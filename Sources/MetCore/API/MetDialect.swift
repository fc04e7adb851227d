import MetEngine

/// Errors on the Met-compatible mirror (`/public/collection/…`) in the Met's own dialect: a JSON
/// object with a `message`, as the Met answers an object it cannot find, so that a Met client
/// pointed at this server reads our errors as it reads the Met's. Problem documents belong to the
/// server's own routes.
enum MetDialect {
    /// `{"message": message}` with `status`, never stored by clients; `headers` (an `Allow`, a
    /// `Retry-After`) go with it.
    static func response(status: Int, message: String, headers: HTTPFields = HTTPFields()) -> Response {
        var json = JSONWriter()
        json.beginObject()
        json.member("message", string: message)
        json.endObject()
        var fields = headers
        fields.set("Content-Type", Response.jsonContentType)
        fields.set("Cache-Control", "no-store")
        return Response(status: status, headers: fields, body: json.bytes)
    }

    /// `problem` said the Met's way: its status and headers, its detail as the message.
    static func response(for problem: Problem) -> Response {
        response(status: problem.status, message: problem.detail, headers: problem.headers)
    }

    /// Whether `target` (as sent) is on the mirror.
    static func isMirror(_ target: String) -> Bool {
        target.hasPrefix(MirrorRoutes.prefix)
    }
}
