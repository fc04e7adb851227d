import HTTPGrammar

/// A strict reader of JSON documents (RFC 8259) over bytes, for what the cache reads from the
/// Met's bodies when it stores them (`EntryDetails.read`): it checks a whole document in one pass
/// and finds the named members of its top-level object, then decodes the few kinds of values the
/// cache keeps (strings, integers, booleans, arrays of integers).
///
/// It reads the values Foundation's `JSONDecoder` read for those members, and refuses what it
/// refused, at about a tenth of its cost (the decoder built a map of every member of the document
/// and boxed each value: 8 % of a fill's CPU). It is stricter where RFC 8259 is and the decoder
/// was not: a comma before a closing bracket, a byte order mark, a control character in a string,
/// and anything wrong in a member the decoder was not asked for (it reads lazily) are refused
/// here, as the bytes go to clients as they are, and a strict client would choke on them. And an
/// integer must be written as one: the decoder read `1.0` or `1.0000000000000001` as 1 through a
/// `Double`, and larger ones through a `Decimal`. A differential test and fuzz harness hold it to that. Refused: anything but one value
/// with whitespace around it, an unescaped control character or invalid UTF-8 in a string, an
/// unpaired surrogate escape, a number outside the grammar, nesting deeper than `maxDepth`. A
/// name given twice counts by its first value, as in the decoder.
package struct JSONReader {
    /// Arrays and objects nested deeper than this are refused (as `JSONDecoder` does).
    package static let maxDepth = 512

    private let json: [UInt8]
    /// The value ranges of the names asked for, by their place in `names`.
    private var found: [Range<Int>?]

    /// Reads `json`, which must be one valid JSON document whose top level is an object, and
    /// finds the members named `names` (as UTF-8). Nil when it is not.
    package init?(_ json: [UInt8], names: [[UInt8]]) {
        self.json = json
        let found = json.withUnsafeBufferPointer { bytes in
            var scanner = Scanner(bytes: bytes, names: names)
            return scanner.document()
        }
        guard let found else { return nil }
        self.found = found
    }

    /// What the member named `names[index]` holds.
    package func value(_ index: Int) -> Value {
        guard let range = found[index] else { return .absent }
        switch json[range.lowerBound] {
        case UInt8(ascii: "n"): return .null
        case UInt8(ascii: "t"): return .bool(true)
        case UInt8(ascii: "f"): return .bool(false)
        case UInt8(ascii: "\""): return .string(Self.string(json, range))
        case UInt8(ascii: "["): return .array(range)
        case UInt8(ascii: "{"): return .object
        default: return .number(range)
        }
    }

    /// A member's value, as far as the cache tells kinds apart.
    package enum Value {
        case absent, null, object
        case bool(Bool)
        case string(String)
        /// The number's text in the document.
        case number(Range<Int>)
        /// The array's text in the document, brackets included.
        case array(Range<Int>)
    }

    /// The integer a number's text in `range` (checked by the scanner) is: digits with an optional
    /// minus sign, within `Int`'s range; nil for a fraction or an exponent, even of a whole number
    /// (`1.0`, `2e3`: the Met writes its integers as integers).
    package func integer(_ range: Range<Int>) -> Int? {
        var index = range.lowerBound
        let negative = json[index] == UInt8(ascii: "-")
        if negative { index += 1 }
        var value = 0
        while index < range.upperBound {
            guard Self.isDigit(json[index]) else { return nil }
            let digit = Int(json[index] &- UInt8(ascii: "0"))
            let (times, overflowTimes) = value.multipliedReportingOverflow(by: 10)
            let (sum, overflowSum) =
                negative ? times.subtractingReportingOverflow(digit) : times.addingReportingOverflow(digit)
            guard !overflowTimes, !overflowSum else { return nil }
            value = sum
            index += 1
        }
        return value
    }

    /// The integers of an array's text in `range`; nil when an element is not an integer.
    package func integers(_ range: Range<Int>) -> [Int]? {
        var result: [Int] = []
        var index = range.lowerBound + 1
        while true {
            while Self.isSpace(json[index]) || json[index] == UInt8(ascii: ",") { index += 1 }
            if json[index] == UInt8(ascii: "]") { return result }
            let start = index
            while index < range.upperBound - 1, !Self.isSpace(json[index]), json[index] != UInt8(ascii: ","),
                json[index] != UInt8(ascii: "]")
            {
                index += 1
            }
            guard json[start] == UInt8(ascii: "-") || Self.isDigit(json[start]), let value = integer(start..<index)
            else { return nil }
            result.append(value)
        }
    }

    /// The strings of an array's text in `range`: each element that is a string, and of each that
    /// is an object, its member `name` when that is a string (`tags`: bare terms in 2018's schema,
    /// `{"term": …}` since). Other elements and values are passed over.
    package func strings(inArray range: Range<Int>, member name: [UInt8]) -> [String] {
        let ranges = json.withUnsafeBufferPointer { bytes in
            var scanner = Scanner(bytes: bytes, names: [name])
            return scanner.elementStrings(in: range)
        }
        return ranges.map { Self.string(json, $0) }
    }

    /// The string whose text, quotes included, is `range` of `json` (checked by the scanner:
    /// valid UTF-8, valid escapes).
    private static func string(_ json: [UInt8], _ range: Range<Int>) -> String {
        let inner = (range.lowerBound + 1)..<(range.upperBound - 1)
        guard json[inner].contains(UInt8(ascii: "\\")) else { return String(decoding: json[inner], as: UTF8.self) }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(inner.count)
        var index = inner.lowerBound
        while index < inner.upperBound {
            let byte = json[index]
            guard byte == UInt8(ascii: "\\") else {
                bytes.append(byte)
                index += 1
                continue
            }
            let escape = json[index + 1]
            index += 2
            switch escape {
            case UInt8(ascii: "b"): bytes.append(0x08)
            case UInt8(ascii: "f"): bytes.append(0x0C)
            case UInt8(ascii: "n"): bytes.append(0x0A)
            case UInt8(ascii: "r"): bytes.append(0x0D)
            case UInt8(ascii: "t"): bytes.append(0x09)
            case UInt8(ascii: "u"):
                var scalar = hex4(json, index)
                index += 4
                if (0xD800..<0xDC00).contains(scalar) {  // a pair, as the scanner checked
                    scalar = 0x10000 + ((scalar - 0xD800) << 10) + (hex4(json, index + 2) - 0xDC00)
                    index += 6
                }
                bytes.append(contentsOf: Character(Unicode.Scalar(scalar)!).utf8)
            default: bytes.append(escape)  // " \ /
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The value of the four hex digits at `index` (checked by the scanner).
    private static func hex4(_ json: [UInt8], _ index: Int) -> UInt32 {
        (index..<(index + 4)).reduce(0) { $0 << 4 | UInt32(Grammar.hexValue(json[$1])!) }
    }

    fileprivate static func isSpace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09
    }

    fileprivate static func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }
}

/// One pass over a document: checks every byte, and notes where the top-level object's named
/// members' values are.
private struct Scanner {
    let bytes: UnsafeBufferPointer<UInt8>
    let names: [[UInt8]]
    var index = 0
    var found: [Range<Int>?]

    init(bytes: UnsafeBufferPointer<UInt8>, names: [[UInt8]]) {
        self.bytes = bytes
        self.names = names
        found = Array(repeating: nil, count: names.count)
    }

    /// The named members' ranges when the whole document is one valid object.
    mutating func document() -> [Range<Int>?]? {
        skipSpace()
        guard peek == UInt8(ascii: "{"), object(depth: 1, top: true) else { return nil }
        skipSpace()
        return index == bytes.count ? found : nil
    }

    private var peek: UInt8? { index < bytes.count ? bytes[index] : nil }

    private mutating func skipSpace() {
        while index < bytes.count, JSONReader.isSpace(bytes[index]) { index += 1 }
    }

    private mutating func value(depth: Int) -> Bool {
        guard let byte = peek else { return false }
        switch byte {
        case UInt8(ascii: "{"): return object(depth: depth + 1, top: false)
        case UInt8(ascii: "["): return array(depth: depth + 1)
        case UInt8(ascii: "\""): return string() != nil
        case UInt8(ascii: "t"): return literal("true")
        case UInt8(ascii: "f"): return literal("false")
        case UInt8(ascii: "n"): return literal("null")
        default: return number()
        }
    }

    private mutating func object(depth: Int, top: Bool) -> Bool {
        guard depth <= JSONReader.maxDepth else { return false }
        index += 1  // {
        skipSpace()
        if peek == UInt8(ascii: "}") {
            index += 1
            return true
        }
        while true {
            skipSpace()
            guard peek == UInt8(ascii: "\""), let name = string() else { return false }
            skipSpace()
            guard peek == UInt8(ascii: ":") else { return false }
            index += 1
            skipSpace()
            let start = index
            guard value(depth: depth) else { return false }
            if top, let slot = slot(of: name), found[slot] == nil { found[slot] = start..<index }
            skipSpace()
            switch peek {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "}"):
                index += 1
                return true
            default: return false
            }
        }
    }

    private mutating func array(depth: Int) -> Bool {
        guard depth <= JSONReader.maxDepth else { return false }
        index += 1  // [
        skipSpace()
        if peek == UInt8(ascii: "]") {
            index += 1
            return true
        }
        while true {
            skipSpace()
            guard value(depth: depth) else { return false }
            skipSpace()
            switch peek {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "]"):
                index += 1
                return true
            default: return false
            }
        }
    }

    /// Where among `names` the member name whose text (quotes included) is `range` is; its
    /// escapes, if any, decoded first.
    private func slot(of range: Range<Int>) -> Int? {
        let inner = UnsafeBufferPointer(rebasing: bytes[(range.lowerBound + 1)..<(range.upperBound - 1)])
        if inner.contains(UInt8(ascii: "\\")) {
            let decoded = Array(JSONReader.decodedName(Array(bytes[range])).utf8)
            return names.firstIndex(of: decoded)
        }
        return names.firstIndex { $0.elementsEqual(inner) }
    }

    /// Skips a string; its range, quotes included, or nil when it is not a valid one.
    private mutating func string() -> Range<Int>? {
        let start = index
        index += 1  // "
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "\""):
                index += 1
                return start..<index
            case UInt8(ascii: "\\"):
                guard escape() else { return nil }
            case 0..<0x20:
                return nil
            case 0x20..<0x80:
                index += 1
            default:
                guard utf8Sequence() else { return nil }
            }
        }
        return nil
    }

    /// Skips an escape; false when it is not one, or is a surrogate that is not the first half
    /// of a pair followed by the second.
    private mutating func escape() -> Bool {
        guard index + 1 < bytes.count else { return false }
        switch bytes[index + 1] {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"), UInt8(ascii: "f"),
            UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
            index += 2
            return true
        case UInt8(ascii: "u"):
            guard let unit = hex4(at: index + 2) else { return false }
            index += 6
            switch unit {
            case 0xD800..<0xDC00:
                guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"),
                    bytes[index + 1] == UInt8(ascii: "u"),
                    let low = hex4(at: index + 2), (0xDC00..<0xE000).contains(low)
                else { return false }
                index += 6
                return true
            case 0xDC00..<0xE000: return false
            default: return true
            }
        default:
            return false
        }
    }

    private func hex4(at start: Int) -> UInt32? {
        guard start + 4 <= bytes.count else { return nil }
        var value: UInt32 = 0
        for offset in 0..<4 {
            guard let digit = Grammar.hexValue(bytes[start + offset]) else { return nil }
            value = value << 4 | UInt32(digit)
        }
        return value
    }

    /// Skips one UTF-8 sequence of two to four bytes that encodes a scalar in its shortest form
    /// (no surrogates, nothing past U+10FFFF).
    private mutating func utf8Sequence() -> Bool {
        let lead = bytes[index]
        let length: Int
        var lower: UInt8 = 0x80
        var upper: UInt8 = 0xBF
        switch lead {
        case 0xC2...0xDF: length = 2
        case 0xE0:
            length = 3
            lower = 0xA0
        case 0xE1...0xEC, 0xEE...0xEF: length = 3
        case 0xED:
            length = 3
            upper = 0x9F
        case 0xF0:
            length = 4
            lower = 0x90
        case 0xF1...0xF3: length = 4
        case 0xF4:
            length = 4
            upper = 0x8F
        default: return false
        }
        guard index + length <= bytes.count, (lower...upper).contains(bytes[index + 1]) else { return false }
        for offset in 2..<length where !(0x80...0xBF).contains(bytes[index + offset]) { return false }
        index += length
        return true
    }

    private mutating func literal(_ word: StaticString) -> Bool {
        let count = word.utf8CodeUnitCount
        guard index + count <= bytes.count else { return false }
        for offset in 0..<count where bytes[index + offset] != word.utf8Start[offset] { return false }
        index += count
        return true
    }

    /// Skips a number: `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`.
    private mutating func number() -> Bool {
        if peek == UInt8(ascii: "-") { index += 1 }
        guard let first = peek, JSONReader.isDigit(first) else { return false }
        index += 1
        if first != UInt8(ascii: "0") { skipDigits() }
        if peek == UInt8(ascii: ".") {
            index += 1
            guard skipDigits() > 0 else { return false }
        }
        if peek == UInt8(ascii: "e") || peek == UInt8(ascii: "E") {
            index += 1
            if peek == UInt8(ascii: "+") || peek == UInt8(ascii: "-") { index += 1 }
            guard skipDigits() > 0 else { return false }
        }
        return true
    }

    @discardableResult
    private mutating func skipDigits() -> Int {
        let start = index
        while index < bytes.count, JSONReader.isDigit(bytes[index]) { index += 1 }
        return index - start
    }
}

extension Scanner {
    /// The ranges of the string elements of the array whose text (checked) is `range`, and of
    /// the string values of `names[0]` in its object elements.
    fileprivate mutating func elementStrings(in range: Range<Int>) -> [Range<Int>] {
        var strings: [Range<Int>] = []
        index = range.lowerBound + 1  // [
        while true {
            skipSpace()
            guard let byte = peek, byte != UInt8(ascii: "]") else { return strings }
            let start = index
            if byte == UInt8(ascii: "{") {
                found = [nil]
                guard object(depth: 1, top: true) else { return strings }
                if let value = found[0], bytes[value.lowerBound] == UInt8(ascii: "\"") { strings.append(value) }
            } else {
                guard value(depth: 1) else { return strings }
                if byte == UInt8(ascii: "\"") { strings.append(start..<index) }
            }
            skipSpace()
            if peek == UInt8(ascii: ",") { index += 1 }
        }
    }
}

extension JSONReader {
    /// A member name's text, quotes included, with its escapes decoded.
    fileprivate static func decodedName(_ text: [UInt8]) -> String { string(text, 0..<text.count) }
}
