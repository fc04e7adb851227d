/// Picks members out of a JSON object without decoding it: scans the top level once, then copies
/// the chosen members' bytes verbatim (so values keep the upstream's exact text).
public enum JSONProjection {
    /// The top-level members of `json` named in `fields`, in the document's order, as a new object.
    /// Names that the object lacks are left out. Nil when `json` is not a JSON object.
    public static func project(_ json: [UInt8], fields: Set<String>) -> [UInt8]? {
        guard let members = topLevelMembers(json) else { return nil }
        var writer = JSONWriter()
        writer.beginObject()
        for member in members where fields.contains(member.name) {
            writer.key(member.name)
            writer.raw(json[member.value])
        }
        writer.endObject()
        return writer.bytes
    }

    /// The names and value byte ranges of the top-level members of a JSON object; nil when the
    /// bytes are not an object or are cut short. Checks structure only (brackets, strings), which
    /// is enough for bodies that were validated when they were stored.
    package static func topLevelMembers(_ json: [UInt8]) -> [(name: String, value: Range<Int>)]? {
        var index = skipSpace(json, 0)
        guard index < json.count, json[index] == UInt8(ascii: "{") else { return nil }
        index += 1
        var members: [(name: String, value: Range<Int>)] = []
        while true {
            index = skipSpace(json, index)
            guard index < json.count else { return nil }
            if json[index] == UInt8(ascii: "}") { return members }
            if json[index] == UInt8(ascii: ",") {
                index = skipSpace(json, index + 1)
                guard index < json.count else { return nil }
            }
            guard json[index] == UInt8(ascii: "\""), let keyEnd = endOfString(json, index) else { return nil }
            let name = String(decoding: json[(index + 1)..<(keyEnd - 1)], as: UTF8.self)
            index = skipSpace(json, keyEnd)
            guard index < json.count, json[index] == UInt8(ascii: ":") else { return nil }
            let valueStart = skipSpace(json, index + 1)
            guard let valueEnd = endOfValue(json, valueStart) else { return nil }
            members.append((name, valueStart..<valueEnd))
            index = valueEnd
        }
    }

    /// The byte ranges of the elements of a top-level JSON array; nil when the bytes are not an
    /// array or are cut short. Checks structure only, like `topLevelMembers`.
    package static func topLevelElements(_ json: [UInt8]) -> [Range<Int>]? {
        var index = skipSpace(json, 0)
        guard index < json.count, json[index] == UInt8(ascii: "[") else { return nil }
        index = skipSpace(json, index + 1)
        var elements: [Range<Int>] = []
        if index < json.count, json[index] == UInt8(ascii: "]") {
            return skipSpace(json, index + 1) == json.count ? [] : nil
        }
        while true {
            guard let end = endOfValue(json, index) else { return nil }
            elements.append(index..<end)
            index = skipSpace(json, end)
            guard index < json.count else { return nil }
            if json[index] == UInt8(ascii: "]") { return skipSpace(json, index + 1) == json.count ? elements : nil }
            guard json[index] == UInt8(ascii: ",") else { return nil }
            index = skipSpace(json, index + 1)
        }
    }

    private static func skipSpace(_ json: [UInt8], _ start: Int) -> Int {
        var index = start
        while index < json.count,
            json[index] == 0x20 || json[index] == 0x0A || json[index] == 0x0D || json[index] == 0x09
        {
            index += 1
        }
        return index
    }

    /// The index just past the string starting at `start` (which holds the opening quote).
    private static func endOfString(_ json: [UInt8], _ start: Int) -> Int? {
        var index = start + 1
        while index < json.count {
            switch json[index] {
            case UInt8(ascii: "\\"): index += 2
            case UInt8(ascii: "\""): return index + 1
            default: index += 1
            }
        }
        return nil
    }

    /// The index just past the value starting at `start`.
    private static func endOfValue(_ json: [UInt8], _ start: Int) -> Int? {
        guard start < json.count else { return nil }
        switch json[start] {
        case UInt8(ascii: "\""):
            return endOfString(json, start)
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            var depth = 0
            var index = start
            while index < json.count {
                switch json[index] {
                case UInt8(ascii: "\""):
                    guard let end = endOfString(json, index) else { return nil }
                    index = end
                    continue
                case UInt8(ascii: "{"), UInt8(ascii: "["):
                    depth += 1
                case UInt8(ascii: "}"), UInt8(ascii: "]"):
                    depth -= 1
                    if depth == 0 { return index + 1 }
                default:
                    break
                }
                index += 1
            }
            return nil
        default:
            var index = start
            while index < json.count, !",}] \n\r\t".utf8.contains(json[index]) { index += 1 }
            return index > start ? index : nil
        }
    }
}
