import HTTPGrammar
import MetEngine

/// What a CORS preflight answers in `Access-Control-Allow-Headers`.
enum CORSHeaders {
    /// Sent when the preflight names no usable header.
    static let defaultAllowed = "Accept, Accept-Encoding, If-None-Match, If-Modified-Since"
    /// The most header names echoed; later ones are dropped.
    static let maxNames = 32
    /// The longest header name echoed, in bytes.
    static let maxNameLength = 64

    /// The `Access-Control-Allow-Headers` value for a preflight's `Access-Control-Request-Headers`
    /// (nil when absent): the field names it lists, echoed only when each is an RFC 9110 token
    /// (`tchar`s, at most `maxNameLength` bytes), split at commas with optional white space
    /// (SP, HTAB) around them, and joined with `", "`. Anything else in an element (non-ASCII
    /// bytes, controls, quotes, separators) drops that element; empty elements are skipped as
    /// RFC 9110 §5.6.1 allows; past `maxNames` the rest are dropped. With nothing left, the
    /// default list. No byte outside a token ever reaches the response.
    static func allowed(for requested: String?) -> String {
        guard let requested else { return defaultAllowed }
        var names: [String] = []
        for element in requested.utf8.split(separator: UInt8(ascii: ","), omittingEmptySubsequences: false) {
            let isWhiteSpace = { (byte: UInt8) in byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }
            let name = element.drop(while: isWhiteSpace).reversed().drop(while: isWhiteSpace).reversed()
            guard !name.isEmpty, name.count <= maxNameLength, name.allSatisfy(Grammar.isTokenByte) else { continue }
            names.append(String(decoding: name, as: UTF8.self))
            if names.count == maxNames { break }
        }
        return names.isEmpty ? defaultAllowed : names.joined(separator: ", ")
    }
}
