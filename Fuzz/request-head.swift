// libFuzzer harness: the request-head reader (`RequestHead.end` and `RequestHead(parsing:)`).
// Beyond not trapping, a head that parses must obey the rules the parser promises.
import HTTPGrammar

@testable import HTTPWire

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzRequestHead(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = UnsafeRawBufferPointer(start: data, count: size)
    guard let end = RequestHead.end(in: bytes) else { return 0 }
    // Searching in two steps, as a connection does across reads, finds the same end.
    let split = size / 2
    if RequestHead.end(in: UnsafeRawBufferPointer(rebasing: bytes[..<split])) == nil {
        let resumed = RequestHead.end(in: bytes, from: RequestHead.resumePoint(afterSearching: split))
        precondition(resumed == end, "resumed search found \(String(describing: resumed)), not \(end)")
    }
    guard let head = try? RequestHead(parsing: UnsafeRawBufferPointer(rebasing: bytes[..<end])) else { return 0 }
    precondition(!head.target.isEmpty && head.target.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7F })
    let hosts = head.fields.filter { Grammar.equalsIgnoringCase($0.name.utf8, "Host".utf8) }.count
    precondition(head.minorVersion == 0 || hosts == 1)
    precondition(hosts <= 1)
    let raw = bytes[..<end]
    precondition(!zip(raw, raw.dropFirst()).contains { $0 != 0x0D && $1 == 0x0A }, "a bare LF was accepted")
    if case .chunked = head.framing {
        precondition(!head.fields.contains { Grammar.equalsIgnoringCase($0.name.utf8, "Content-Length".utf8) })
    }
    return 0
}
