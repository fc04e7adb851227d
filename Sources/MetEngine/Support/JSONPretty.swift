/// Re-indents JSON for a terminal, keeping it the same document: members stay in the order the
/// server wrote them (a record's in the Met's order, a page's as documented), strings stay byte
/// for byte but for `\/`, which is written `/` (the same string, and what people expect to read
/// in a URL), empty objects and arrays stay `{}` and `[]`, and two spaces indent each level.
/// The terminal's counterpart of `JSONWriter`, so the CLI never goes through Foundation's
/// serializer, which sorts keys or reorders them and escapes every slash.
public enum JSONPretty {
    /// `json` re-indented; nil when its brackets or strings do not balance (the caller then
    /// prints the bytes as they are). It reads JSON the server wrote: it does not validate more.
    public static func format(_ json: [UInt8]) -> [UInt8]? {
        var output: [UInt8] = []
        output.reserveCapacity(json.count + json.count / 4)
        var depth = 0
        var index = 0
        /// After `{` or `[`: the next token decides between an empty pair and a new line.
        var opened = false

        func newline() {
            output.append(0x0A)
            output.append(contentsOf: repeatElement(0x20, count: depth * 2))
        }

        while index < json.count {
            let byte = json[index]
            switch byte {
            case 0x20, 0x09, 0x0A, 0x0D:
                index += 1
                continue
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                depth -= 1
                guard depth >= 0 else { return nil }
                if !opened { newline() }
                opened = false
                output.append(byte)
                index += 1
                continue
            default:
                break
            }
            if opened {
                opened = false
                newline()
            }
            switch byte {
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                output.append(byte)
                depth += 1
                opened = true
                index += 1
            case UInt8(ascii: ","):
                output.append(byte)
                newline()
                index += 1
            case UInt8(ascii: ":"):
                output.append(contentsOf: [UInt8(ascii: ":"), 0x20])
                index += 1
            case UInt8(ascii: "\""):
                guard let end = copyString(json, from: index, to: &output) else { return nil }
                index = end
            default:
                // A number, true, false or null: up to the next structural byte or white space.
                let start = index
                while index < json.count, !Self.isDelimiter(json[index]) { index += 1 }
                guard index > start else { return nil }
                output.append(contentsOf: json[start..<index])
            }
        }
        return depth == 0 && !opened && !output.isEmpty ? output : nil
    }

    /// Copies the string starting at `start` (its opening quote), writing `\/` as `/`; returns the
    /// index after its closing quote, or nil when it does not close.
    private static func copyString(_ json: [UInt8], from start: Int, to output: inout [UInt8]) -> Int? {
        output.append(UInt8(ascii: "\""))
        var index = start + 1
        while index < json.count {
            let byte = json[index]
            if byte == UInt8(ascii: "\\") {
                guard index + 1 < json.count else { return nil }
                let escaped = json[index + 1]
                if escaped == UInt8(ascii: "/") {
                    output.append(escaped)
                } else {
                    output.append(contentsOf: [byte, escaped])
                }
                index += 2
                continue
            }
            output.append(byte)
            index += 1
            if byte == UInt8(ascii: "\"") { return index }
        }
        return nil
    }

    private static func isDelimiter(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: ","), UInt8(ascii: "]"), UInt8(ascii: "}"), UInt8(ascii: ":"), 0x20, 0x09, 0x0A, 0x0D: true
        default: false
        }
    }
}
