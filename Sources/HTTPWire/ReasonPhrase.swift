/// Reason phrases for the status line. Clients must ignore them (RFC 9112 §4) and the grammar
/// allows an empty one, but people reading a raw response (`curl -i`, a packet capture) and older
/// tools expect the usual words.
public enum ReasonPhrase {
    /// The phrase for `status`; `Status NNN` for a code without one here.
    public static func `for`(_ status: Int) -> String {
        switch status {
        case 200: "OK"
        case 204: "No Content"
        case 301: "Moved Permanently"
        case 302: "Found"
        case 304: "Not Modified"
        case 400: "Bad Request"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 405: "Method Not Allowed"
        case 410: "Gone"
        case 413: "Content Too Large"
        case 414: "URI Too Long"
        case 431: "Request Header Fields Too Large"
        case 499: "Client Closed Request"
        case 500: "Internal Server Error"
        case 502: "Bad Gateway"
        case 503: "Service Unavailable"
        case 504: "Gateway Timeout"
        default: "Status \(status)"
        }
    }
}
