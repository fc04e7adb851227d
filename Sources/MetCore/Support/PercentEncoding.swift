/// Percent-encoding (RFC 3986 §2.1) byte by byte over UTF-8: total, so no string a client can
/// send makes it fail or trap. Every URL the server builds from client values goes through it:
/// the upstream target (`UpstreamTarget`) and the `/search` links it hands out.
enum PercentEncoding {
    /// Appends `text` to `output` with every byte but the unreserved ones (`A–Z a–z 0–9 - . _ ~`)
    /// and those in `kept` written as `%XX` (upper-case hex).
    ///
    /// - Parameter kept: ASCII bytes to leave as they are, beyond the unreserved ones.
    /// Runs of bytes that need no escape are appended whole: a cache key is written on every
    /// hit, and it is usually one such run.
    static func append(_ text: String, keeping kept: KeptBytes = [], to output: inout String) {
        let bytes = text.utf8
        var runStart = bytes.startIndex
        var index = runStart
        while index != bytes.endIndex {
            let byte = bytes[index]
            if isUnreserved(byte) || kept.keeps(byte) {
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
    static func encode(_ text: String, keeping kept: KeptBytes = []) -> String {
        var output = ""
        output.reserveCapacity(text.utf8.count)
        append(text, keeping: kept, to: &output)
        return output
    }

    /// Bytes a caller leaves unencoded besides the unreserved ones.
    struct KeptBytes: OptionSet {
        let rawValue: UInt8

        /// `|`, which the Met's own examples send unencoded between terms (`Paintings|Silk`).
        static let pipe = KeptBytes(rawValue: 1)
        /// `,`, the separator of `fields=` lists.
        static let comma = KeptBytes(rawValue: 2)
        /// `/`, between path segments.
        static let slash = KeptBytes(rawValue: 4)

        func keeps(_ byte: UInt8) -> Bool {
            switch byte {
            case UInt8(ascii: "|"): contains(.pipe)
            case UInt8(ascii: ","): contains(.comma)
            case UInt8(ascii: "/"): contains(.slash)
            default: false
            }
        }
    }

    /// RFC 3986 `unreserved`.
    static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
            UInt8(ascii: "~"):
            true
        default:
            false
        }
    }

    private static let hexDigits = Array("0123456789ABCDEF".utf8)
}
