import Foundation
import MetEngine

/// What an object's summary and an ID list were read with before `JSONReader`: Foundation's
/// `JSONDecoder` and the synthesized conformances of the same members. The reader must read the
/// same values from every body the decoder accepts, and refuse every body it refuses; it may
/// refuse more only for what RFC 8259 does not allow and the decoder let through (`isLenient`):
/// the decoder reads lazily, so a member it was not asked for was never checked. For the
/// differential test and the fuzz harness.
public enum JSONDecoderOracle {
    private struct Summary: Decodable {
        var objectID: Int
        var title: String?
        var artistDisplayName: String?
        var objectDate: String?
        var objectBeginDate: Int?
        var objectEndDate: Int?
        var medium: String?
        var creditLine: String?
        var primaryImage: String?
        var primaryImageSmall: String?
        var isPublicDomain: Bool?
        var objectURL: String?

        var summary: ObjectSummary {
            var summary = ObjectSummary(objectID: objectID)
            (summary.title, summary.artistDisplayName, summary.objectDate) = (title, artistDisplayName, objectDate)
            (summary.objectBeginDate, summary.objectEndDate) = (objectBeginDate, objectEndDate)
            (summary.medium, summary.creditLine, summary.primaryImage) = (medium, creditLine, primaryImage)
            (summary.primaryImageSmall, summary.isPublicDomain) = (primaryImageSmall, isPublicDomain)
            summary.objectURL = objectURL
            return summary
        }
    }

    private struct List: Decodable {
        var total: Int
        var objectIDs: [Int]?
    }

    /// Any JSON value, every part of it decoded: the decoder's verdict on a whole document.
    private indirect enum Whole: Decodable {
        case null
        case bool(Bool)
        case number(Double)
        case string(String)
        case array([Whole])
        case object([String: Whole])

        init(from decoder: any Decoder) throws {
            let value = try decoder.singleValueContainer()
            if value.decodeNil() {
                self = .null
            } else if let bool = try? value.decode(Bool.self) {
                self = .bool(bool)
            } else if let number = try? value.decode(Double.self) {
                self = .number(number)
            } else if let string = try? value.decode(String.self) {
                self = .string(string)
            } else if let array = try? value.decode([Whole].self) {
                self = .array(array)
            } else {
                self = .object(try value.decode([String: Whole].self))
            }
        }
    }

    /// How the reader's reading of `body` differs from the decoder's, or nil when it does not.
    public static func difference(_ body: [UInt8]) -> String? {
        let summary = ObjectSummary(json: body)
        let decoded = (try? JSONDecoder().decode(Summary.self, from: Data(body)))?.summary
        if summary != decoded, !(summary == nil && isLenient(body)) {
            return "summary: \(summary as Any) against the decoder's \(decoded as Any)"
        }
        let list = IDList(json: body)
        let decodedList = (try? JSONDecoder().decode(List.self, from: Data(body))).map {
            IDList(total: $0.total, ids: $0.objectIDs ?? [])
        }
        if list != decodedList, !(list == nil && isLenient(body)) {
            return "ID list: \(list as Any) against the decoder's \(decodedList as Any)"
        }
        return nil
    }

    /// Whether `body` has what the decoder lets through and the reader refuses: a byte order mark,
    /// bytes that are not UTF-8, a control character in a string, a comma before a closing bracket
    /// or a number outside the grammar (outside strings), anything the decoder refuses once it
    /// reads every value (in a member it was not asked for), a name given twice in an object (the
    /// decoder reads the first value only: nothing in the others is checked), an escape that is
    /// not one, or a fraction or an exponent where an integer is read (`objectID`,
    /// `objectBeginDate`, `objectEndDate`, `total`, an array's element).
    public static func isLenient(_ body: [UInt8]) -> Bool {
        if body.starts(with: [0xEF, 0xBB, 0xBF]) || String(validating: body, as: UTF8.self) == nil { return true }
        if (try? JSONDecoder().decode(Whole.self, from: Data(body))) == nil { return true }
        let integerMembers = ["objectID", "objectBeginDate", "objectEndDate", "total"].map { Array($0.utf8) }
        var inString = false
        var escaped = false
        var string: [UInt8] = []  // the last string's text
        var last: UInt8 = 0  // the last byte outside strings and spaces
        var number: [UInt8] = []
        var beforeNumber: UInt8 = 0
        var names: [Set<[UInt8]>] = []  // those of each object open around here
        for byte in body + [0x20] {
            if inString {
                if byte < 0x20 { return true }
                if escaped {
                    escaped = false
                    guard Array(#""\/bfnrtu"#.utf8).contains(byte) else { return true }
                } else if byte == UInt8(ascii: "\\") {
                    escaped = true
                } else if byte == UInt8(ascii: "\"") {
                    inString = false
                    continue
                }
                string.append(byte)
                continue
            }
            if byte == UInt8(ascii: "-") || byte == UInt8(ascii: "+") || byte == UInt8(ascii: ".")
                || byte == UInt8(ascii: "e") && !number.isEmpty || byte == UInt8(ascii: "E")
                || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
            {
                if number.isEmpty { beforeNumber = last }
                number.append(byte)
                last = byte
                continue
            }
            if !number.isEmpty {
                guard isNumber(number) else { return true }
                let readAsInteger =
                    beforeNumber == UInt8(ascii: "[") || beforeNumber == UInt8(ascii: ",")
                    || beforeNumber == UInt8(ascii: ":") && integerMembers.contains(string)
                if readAsInteger, number.contains(where: { $0 == UInt8(ascii: ".") || $0 | 0x20 == UInt8(ascii: "e") })
                {
                    return true
                }
                number = []
            }
            switch byte {
            case 0x20, 0x09, 0x0A, 0x0D: continue
            case UInt8(ascii: "}") where last == UInt8(ascii: ","), UInt8(ascii: "]") where last == UInt8(ascii: ","):
                return true
            case UInt8(ascii: "\""):
                inString = true
                string = []
            case UInt8(ascii: "{"): names.append([])
            case UInt8(ascii: "}"): _ = names.popLast()
            case UInt8(ascii: ":") where last == UInt8(ascii: "\""):
                // The name as the decoder compares it: with its escapes decoded.
                let quoted = Data([UInt8(ascii: "\"")] + string + [UInt8(ascii: "\"")])
                let name = (try? JSONDecoder().decode(String.self, from: quoted)).map { Array($0.utf8) } ?? string
                guard !names.isEmpty, names[names.count - 1].insert(name).inserted else { return true }
            default: break
            }
            last = byte
        }
        return hasBadUnicodeEscape(body)
    }

    /// Whether a `\u` escape of `body` is not four hex digits, or is half of a surrogate pair
    /// without the other half.
    private static func hasBadUnicodeEscape(_ body: [UInt8]) -> Bool {
        let text = String(decoding: body, as: UTF8.self)
        for match in text.matches(of: #/(\\+)u(.{0,4})/#) where match.1.count % 2 == 1 {
            guard match.2.count == 4, let unit = UInt16(match.2, radix: 16) else { return true }
            let rest = text[match.range.upperBound...]
            switch unit {
            case 0xD800..<0xDC00:
                guard rest.hasPrefix("\\u"), let low = UInt16(rest.dropFirst(2).prefix(4), radix: 16),
                    (0xDC00..<0xE000).contains(low)
                else { return true }
            case 0xDC00..<0xE000:
                let before = text[..<match.range.lowerBound].suffix(6)
                guard before.hasPrefix("\\u"), let high = UInt16(before.dropFirst(2), radix: 16),
                    (0xD800..<0xDC00).contains(high)
                else { return true }
            default: break
            }
        }
        return false
    }

    /// Whether `text` is a JSON number: `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`.
    private static func isNumber(_ text: [UInt8]) -> Bool {
        let pattern = #/-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?/#
        return String(decoding: text, as: UTF8.self).wholeMatch(of: pattern) != nil
    }
}
