// libFuzzer harness: the deep-link parser (`DeepLink.objectID(in:)`) and the check that decides
// whether a record's objectURL may become a Location (`DeepLink.target`).
@testable import MetCore
@testable import MetEngine

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzDeepLink(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    if let id = try? DeepLink.objectID(in: text) {
        precondition(id >= 1 && DeepLink.url(for: id) == text.lowercased(), "\(text) is not themet://\(id)")
    }
    let (kind, location) = DeepLink.target(
        id: 1, isPublicDomain: false, objectURL: text, detailTemplate: "/objects/{id}")
    precondition(kind == "web")
    if location != "https://www.metmuseum.org/art/collection/search/1" {
        // An accepted objectURL comes out re-serialized (scheme and host in lower case, an empty
        // path as `/`, the port without leading zeros), and re-serializing it changes nothing.
        precondition(MetWebPage.normalized(location) == location, "\(location) is not stable")
        let host = location.split(separator: "/", omittingEmptySubsequences: false).dropFirst(2).first ?? ""
        let name = host.split(separator: ":").first ?? ""
        precondition(name == "metmuseum.org" || name.hasSuffix(".metmuseum.org"), "\(location) left the Met")
    }
    precondition(!location.utf8.contains { $0 < 0x21 || $0 == 0x7F }, "a Location with spaces or controls")
    return 0
}
