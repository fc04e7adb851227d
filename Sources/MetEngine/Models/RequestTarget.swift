import HTTPGrammar

/// A request target split into a decoded path and decoded query items.
public struct RequestTarget: Sendable, Equatable {
    /// One `name=value` pair of the query, percent-decoded, `+` read as a space.
    public struct QueryItem: Sendable, Hashable {
        public var name: String
        public var value: String

        public init(name: String, value: String) {
            self.name = name
            self.value = value
        }
    }

    /// The path, percent-decoded (`/objects/1`).
    public var path: String
    /// The query items in the order sent; a name may repeat.
    public var query: [QueryItem]

    /// Parses an origin-form target (`/path?query`). Throws `invalid_request_target` for anything
    /// else, and for percent-encoding that is malformed or not UTF-8.
    public init(parsing target: String) throws(Problem) {
        guard target.utf8.first == UInt8(ascii: "/") else {
            throw Problem(.invalidRequestTarget, "The request target must be a path starting with '/'.")
        }
        // Split on bytes, never on Characters: a combining mark after `?`, `&` or `=` would merge
        // with it into one Character and hide the separator.
        let bytes = target.utf8
        let rawPath: Substring
        let rawQuery: Substring.UTF8View?
        if let mark = bytes.firstIndex(of: UInt8(ascii: "?")) {
            rawPath = Substring(bytes[..<mark])
            rawQuery = bytes[bytes.index(after: mark)...]
        } else {
            rawPath = target[...]
            rawQuery = nil
        }
        guard let path = Self.percentDecode(rawPath, plusIsSpace: false) else {
            throw Problem(.invalidRequestTarget, "The path has malformed percent-encoding.")
        }
        var items: [QueryItem] = []
        if let rawQuery {
            // Pairs between `&`s (empty ones skipped), each split at its first `=`; walked by
            // index, as this runs for every request.
            let query = rawQuery.prefix { $0 != UInt8(ascii: "#") }
            var start = query.startIndex
            while start < query.endIndex {
                let end = query[start...].firstIndex(of: UInt8(ascii: "&")) ?? query.endIndex
                let pair = query[start..<end]
                start = end < query.endIndex ? query.index(after: end) : end
                guard !pair.isEmpty else { continue }
                let equals = pair.firstIndex(of: UInt8(ascii: "="))
                let rawName = Substring(pair[..<(equals ?? pair.endIndex)])
                let rawValue = equals.map { Substring(pair[pair.index(after: $0)...]) } ?? ""
                guard let name = Self.percentDecode(rawName, plusIsSpace: true),
                    let value = Self.percentDecode(rawValue, plusIsSpace: true)
                else {
                    throw Problem(.invalidRequestTarget, "The query has malformed percent-encoding.")
                }
                items.append(QueryItem(name: name, value: value))
            }
        }
        self.path = path
        self.query = items
    }

    /// The last value given for `name`, or nil.
    public func value(of name: String) -> String? {
        query.last { $0.name == name }?.value
    }

    /// Decodes `%XX` escapes (and `+` as a space when asked); nil when an escape is malformed or
    /// the result is not valid UTF-8.
    package static func percentDecode(_ text: Substring, plusIsSpace: Bool) -> String? {
        let utf8 = text.utf8
        if !utf8.contains(where: { $0 == UInt8(ascii: "%") || (plusIsSpace && $0 == UInt8(ascii: "+")) }) {
            return String(text)
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(utf8.count)
        var iterator = utf8.makeIterator()
        while let byte = iterator.next() {
            switch byte {
            case UInt8(ascii: "%"):
                guard let high = iterator.next().flatMap(Grammar.hexValue),
                    let low = iterator.next().flatMap(Grammar.hexValue)
                else {
                    return nil
                }
                bytes.append(high << 4 | low)
            case UInt8(ascii: "+") where plusIsSpace:
                bytes.append(UInt8(ascii: " "))
            default:
                bytes.append(byte)
            }
        }
        return String(validating: bytes, as: UTF8.self)
    }
}
