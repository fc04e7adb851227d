import HTTPGrammar

/// Percent-encoding (RFC 3986 §2.1) byte by byte over UTF-8: total, so no string a client can
/// send makes it fail or trap. Every URL the server builds from client values goes through it:
/// the upstream target (`UpstreamTarget`) and the `/search` links it hands out, both written by
/// `target(path:query:keeping:)`, the one place that joins query items into `?a=b&c=d`.
public enum PercentEncoding {
    /// Appends `text` to `output` with every byte but the unreserved ones (`A–Z a–z 0–9 - . _ ~`)
    /// and those in `kept` written as `%XX` (upper-case hex).
    ///
    /// - Parameter kept: ASCII bytes to leave as they are, beyond the unreserved ones.
    /// Runs of bytes that need no escape are appended whole: a cache key is written on every
    /// hit, and it is usually one such run.
    package static func append(_ text: String, keeping kept: KeptBytes = [], to output: inout String) {
        let bytes = text.utf8
        var runStart = bytes.startIndex
        var index = runStart
        while index != bytes.endIndex {
            let byte = bytes[index]
            if Grammar.isUnreserved(byte) || kept.keeps(byte) {
                bytes.formIndex(after: &index)
                continue
            }
            // A run holds only ASCII bytes, so it starts and ends on scalar boundaries.
            if runStart != index { output += Substring(bytes[runStart..<index]) }
            output.unicodeScalars.append("%")
            output.unicodeScalars.append(Unicode.Scalar(hexDigits[Int(byte >> 4)]))
            output.unicodeScalars.append(Unicode.Scalar(hexDigits[Int(byte & 0x0F)]))
            bytes.formIndex(after: &index)
            runStart = index
        }
        if runStart == bytes.startIndex {
            output += text
        } else if runStart != bytes.endIndex {
            output += Substring(bytes[runStart...])
        }
    }

    /// `text` percent-encoded as `append(_:keeping:to:)` does.
    public static func encode(_ text: String, keeping kept: KeptBytes = []) -> String {
        var output = ""
        output.reserveCapacity(text.utf8.count)
        append(text, keeping: kept, to: &output)
        return output
    }

    /// An origin-form request target: `path` (encoded keeping `/`), then, when there are items,
    /// `?` and `name=value` pairs joined by `&` in the order given, names and values encoded
    /// keeping `kept`. Total: any strings give visible ASCII that `RequestTarget(parsing:)` reads
    /// back as the same path and items, so no value can pose as another item (`&` in a value is
    /// written `%26`).
    public static func target(path: String, query: [RequestTarget.QueryItem], keeping kept: KeptBytes) -> String {
        var target = ""
        target.reserveCapacity(path.utf8.count + query.count * 24)
        append(path, keeping: .slash, to: &target)
        for (index, item) in query.enumerated() {
            target.unicodeScalars.append(index == 0 ? "?" : "&")
            append(item.name, keeping: kept, to: &target)
            target.unicodeScalars.append("=")
            append(item.value, keeping: kept, to: &target)
        }
        return target
    }

    /// Bytes a caller leaves unencoded besides the unreserved ones.
    public struct KeptBytes: OptionSet, Sendable {
        public let rawValue: UInt8

        public init(rawValue: UInt8) {
            self.rawValue = rawValue
        }

        /// `|`, which the Met's own examples send unencoded between terms (`Paintings|Silk`).
        public static let pipe = KeptBytes(rawValue: 1)
        /// `,`, the separator of `fields=` lists.
        public static let comma = KeptBytes(rawValue: 2)
        /// `/`, between path segments.
        public static let slash = KeptBytes(rawValue: 4)

        package func keeps(_ byte: UInt8) -> Bool {
            switch byte {
            case UInt8(ascii: "|"): contains(.pipe)
            case UInt8(ascii: ","): contains(.comma)
            case UInt8(ascii: "/"): contains(.slash)
            default: false
            }
        }
    }

    private static let hexDigits = Array("0123456789ABCDEF".utf8)
}
