// libFuzzer harness: what the client controls in an access line (target, user agent) and the
// terminal's JSON re-indenter (`JSONPretty`) over any bytes. An access line is always one line of
// printable ASCII with its fields where a parser looks for them, the JSON line parses back to the
// same strings, and a re-indented document is the same document.
import Foundation

@testable import MetCore
@testable import MetEngine

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzLogLine(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let split = bytes.firstIndex(of: 0) ?? bytes.count
    let target = String(decoding: bytes[..<split], as: UTF8.self)
    let agent = String(decoding: bytes[min(split + 1, bytes.count)...], as: UTF8.self)
    let record = AccessRecord(
        time: 1_764_646_351.5, client: "127.0.0.1", requestID: "0123456789abcdef", method: "GET", target: target,
        status: 200, bytes: size, duration: 0.001, cache: .hit, upstream: nil, userAgent: agent)

    var text = AccessLine(format: .text)
    let line = text.bytes(for: record)
    precondition(line.last == 0x0A && line.dropLast().allSatisfy { (0x20...0x7E).contains($0) }, "not one line")
    // Outside the quoted fields there are exactly the separators the format has: the quotes that
    // open and close the request and the agent are the only unescaped ones.
    var quotes = 0
    var escaped = false
    for byte in line {
        if escaped {
            escaped = false
        } else if byte == UInt8(ascii: "\\") {
            escaped = true
        } else if byte == UInt8(ascii: "\"") {
            quotes += 1
        }
    }
    precondition(quotes == 4, "\(quotes) unescaped quotes in \(String(decoding: line, as: UTF8.self))")

    var json = AccessLine(format: .json)
    let object = try? JSONSerialization.jsonObject(with: Data(json.bytes(for: record).dropLast())) as? [String: Any]
    precondition(object?["target"] as? String == target && object?["userAgent"] as? String == agent, "JSON differs")

    // The round trip is checked on what JSON allows outside and inside strings alone: printable
    // ASCII and the four white-space bytes. (Foundation reads some inputs JSON forbids, such as
    // one starting with a NUL byte, which JSONPretty, made for the server's own JSON, need not.)
    let plain = bytes.allSatisfy { (0x20...0x7E).contains($0) || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D }
    if plain, let pretty = JSONPretty.format(bytes),
        let before = try? JSONSerialization.jsonObject(with: Data(bytes), options: .fragmentsAllowed)
    {
        let after = try? JSONSerialization.jsonObject(with: Data(pretty), options: .fragmentsAllowed)
        // Compared in one canonical form: keys sorted, the same writer for both.
        func canonical(_ value: Any?) -> Data? {
            value.flatMap {
                try? JSONSerialization.data(withJSONObject: $0, options: [.sortedKeys, .fragmentsAllowed])
            }
        }
        precondition(canonical(after) == canonical(before), "re-indenting changed the document")
    }
    return 0
}
