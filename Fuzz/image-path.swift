// libFuzzer harness: the image host's path shapes (`ImagePath.parse`), as `/images/{path}` takes
// them, and the one `Range` a picture answers (`ByteRange`).
@testable import MetCore
@testable import MetEngine

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzImagePath(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    if let parsed = try? ImagePath.parse(text) {
        // Accepted: exactly CRDImages/code/rendition/file, asked of the host as given, with
        // nothing that could climb out of the host's tree or start a new request line.
        let parts = parsed.path.split(separator: "/", omittingEmptySubsequences: false)
        precondition(parts.count == 5 && parts[0].isEmpty && parts[1] == "CRDImages", "\(parsed.path)")
        precondition(parsed.path == "/" + text, "\(parsed.path) is not /\(text)")
        precondition(!parts.contains { $0 == ".." || $0 == "." || $0.isEmpty && $0.startIndex != parts[0].startIndex })
        precondition(parsed.path.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "%") })
        precondition(try! ImagePath.parse(text) == parsed, "parsing is not a function")
    }
    for length in [0, 1, 500, Int.max / 2] {
        guard let range = ByteRange(text), let bytes = range.resolved(length: length) else { continue }
        precondition(bytes.lowerBound >= 0 && bytes.upperBound < length, "\(text) selects \(bytes) of \(length)")
    }
    return 0
}
