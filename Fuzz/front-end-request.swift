// libFuzzer harness: the parameters of the routes front ends ask for (`ObjectBatch` for
// /objects?ids=, `RandomRequest` for /random) and the base URL a IIIF manifest takes from a
// request's Host and scheme (`ManifestPipeline.base`): any target either validates or is a 400,
// never a trap, and what validates keeps what it promises.
import Foundation

@testable import MetCore
@testable import MetEngine

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzFrontEndRequest(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    if let target = try? RequestTarget(parsing: "/?" + text) {
        do {
            let batch = try ObjectBatch(target)
            precondition((1...ObjectBatch.maxCount).contains(batch.ids.count), "\(batch.ids.count) IDs")
            precondition(Set(batch.ids).count == batch.ids.count, "a repeated ID")
            precondition(batch.ids.allSatisfy { (1...ObjectID.maximum).contains($0) }, "an ID out of range")
            precondition((0...30).contains(batch.wait), "a wait of \(batch.wait) s")
        } catch {
            precondition(error.status == 400, "a batch refused with \(error.status)")
        }
        do {
            let random = try RandomRequest(target)
            if let search = random.search { precondition(!search.q.isEmpty && random.departmentId == nil) }
            precondition((random.departmentId ?? 1) > 0, "department \(random.departmentId ?? 0)")
        } catch {
            precondition(error.status == 400, "a draw refused with \(error.status)")
        }
    }
    for scheme in ["http", "https"] {
        let base = ManifestPipeline.base(publicURL: nil, scheme: scheme, host: text)
        let prefix = scheme + "://"
        precondition(base.hasPrefix(prefix) && base.utf8.count <= prefix.utf8.count + 255, "base \(base)")
        precondition(
            base.utf8.dropFirst(prefix.utf8.count).allSatisfy(isPlainAuthorityByte),
            "a base with a byte outside a plain authority: \(base)")
    }
    return 0
}

/// Digits, `:` and `;`, letters, `[`, `\`, `]`, and `-._~`: a superset of what a plain authority
/// may hold, so that a byte outside it is certainly wrong.
private func isPlainAuthorityByte(_ byte: UInt8) -> Bool {
    (0x30...0x3B).contains(byte) || (0x41...0x5D).contains(byte) || (0x61...0x7A).contains(byte)
        || byte == 0x2D || byte == 0x2E || byte == 0x5F || byte == 0x7E
}
