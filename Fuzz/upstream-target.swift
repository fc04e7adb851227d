// libFuzzer harness: the upstream target encoder (`UpstreamTarget.encode`), which writes every
// URL sent to the Met and every cache key. For any names and values it must give visible ASCII
// that parses back to exactly the same items: then no two different queries share a key.
@testable import MetCore
@testable import MetEngine

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzUpstreamTarget(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    // The input is names and values in turn, separated by NUL bytes.
    let parts = UnsafeBufferPointer(start: data, count: size).split(separator: 0, omittingEmptySubsequences: false)
        .map { String(decoding: $0, as: UTF8.self) }
    var items: [RequestTarget.QueryItem] = []
    for index in stride(from: 0, to: parts.count, by: 2) {
        items.append(.init(name: parts[index], value: index + 1 < parts.count ? parts[index + 1] : ""))
    }
    let target = UpstreamTarget.encode(path: "/public/collection/v1/search", query: items)
    precondition(target.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7F }, "not visible ASCII")
    guard let parsed = try? RequestTarget(parsing: target) else { preconditionFailure("does not parse") }
    precondition(parsed.path == "/public/collection/v1/search")
    precondition(parsed.query == items, "does not decode to the same items")
    return 0
}
