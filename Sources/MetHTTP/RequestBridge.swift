import CLibevent
import MetCore

/// Translates between evhttp requests and the core's `Request`/`Response` values. Loop thread only.
enum RequestBridge {
    /// Reads method, target, header fields and body out of an evhttp request.
    static func request(from raw: OpaquePointer) -> Request {
        let target = evhttp_request_get_uri(raw).map { String(cString: $0) } ?? "/"
        var headers = HTTPFields()
        var field = evhttp_request_get_input_headers(raw)?.pointee.tqh_first
        while let current = field {
            if let key = current.pointee.key, let value = current.pointee.value {
                headers.append(String(cString: key), String(cString: value))
            }
            field = current.pointee.next.tqe_next
        }
        var body: [UInt8] = []
        if let input = evhttp_request_get_input_buffer(raw) {
            let length = evbuffer_get_length(input)
            if length > 0 {
                body = [UInt8](unsafeUninitializedCapacity: length) { buffer, count in
                    count = max(0, evbuffer_copyout(input, buffer.baseAddress, length))
                }
            }
        }
        return Request(method: method(of: raw), target: target, headers: headers, body: body)
    }

    /// Writes `response` as the reply to `raw` and returns the body bytes sent. After this call
    /// libevent owns (and eventually frees) the request.
    ///
    /// For HEAD, the headers (with the GET body's `Content-Length`) go out without the body.
    @discardableResult
    static func send(_ response: Response, to raw: OpaquePointer, isHead: Bool, closeConnection: Bool) -> Int {
        let headers = evhttp_request_get_output_headers(raw)
        for field in response.headers where evhttp_add_header(headers, field.name, field.value) != 0 {
            // libevent refuses values with CR or LF; such a value is dropped rather than sent.
            continue
        }
        if closeConnection { evhttp_add_header(headers, "Connection", "close") }
        let status = Int32(response.status)
        let reason = ReasonPhrase.for(response.status)
        let hasBody = !response.body.isEmpty && response.status != 304 && response.status != 204
        if response.isChunked {
            evhttp_send_reply_start(raw, status, reason)
            if hasBody && !isHead, let chunk = evbuffer_new() {
                response.body.withUnsafeBytes { _ = evbuffer_add(chunk, $0.baseAddress, $0.count) }
                evhttp_send_reply_chunk(raw, chunk)
                evbuffer_free(chunk)
            }
            evhttp_send_reply_end(raw)
            return isHead ? 0 : response.body.count
        }
        if hasBody {
            if isHead {
                // libevent computes Content-Length from the buffer, which stays empty for HEAD.
                evhttp_add_header(headers, "Content-Length", String(response.body.count))
            } else if let output = evhttp_request_get_output_buffer(raw) {
                response.body.withUnsafeBytes { _ = evbuffer_add(output, $0.baseAddress, $0.count) }
            }
        }
        evhttp_send_reply(raw, status, reason, nil)
        return hasBody && !isHead ? response.body.count : 0
    }

    private static func method(of raw: OpaquePointer) -> String {
        switch evhttp_request_get_command(raw) {
        case EVHTTP_REQ_GET: "GET"
        case EVHTTP_REQ_HEAD: "HEAD"
        case EVHTTP_REQ_POST: "POST"
        case EVHTTP_REQ_PUT: "PUT"
        case EVHTTP_REQ_DELETE: "DELETE"
        case EVHTTP_REQ_OPTIONS: "OPTIONS"
        case EVHTTP_REQ_TRACE: "TRACE"
        case EVHTTP_REQ_CONNECT: "CONNECT"
        case EVHTTP_REQ_PATCH: "PATCH"
        default: "UNKNOWN"
        }
    }
}
