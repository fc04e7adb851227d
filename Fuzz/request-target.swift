// libFuzzer harness: the request-target parser (`RequestTarget(parsing:)`): percent-decoding of
// the path and the query, which must never trap and must keep what it promises.
@testable import MetCore
@testable import MetEngine

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzRequestTarget(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    guard let target = try? RequestTarget(parsing: text) else { return 0 }
    precondition(text.utf8.first == UInt8(ascii: "/"))
    precondition(target.path.utf8.count <= text.utf8.count, "decoding made the path longer")
    for item in target.query { precondition(target.value(of: item.name) != nil) }
    return 0
}
