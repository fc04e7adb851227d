// libFuzzer harness: the parameters of the routes front ends ask for (`ObjectBatch` for
// /objects?ids=, `RandomRequest` for /random) and the base URL a IIIF manifest takes from a
// request's Host (`ManifestPipeline.base`): any target either validates or is a 400, never a trap,
// and what validates keeps what it promises.
import Foundation

@testable import MetCore

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
    let base = ManifestPipeline.base(publicURL: nil, host: text)
    precondition(base.hasPrefix("http://") && base.utf8.count <= 262, "base \(base)")
    let host = base.utf8.dropFirst("http://".count)
    precondition(
        host.allSatisfy { ($0 >= 0x30 && $0 <= 0x3B) || ($0 >= 0x41 && $0 <= 0x5D) || ($0 >= 0x61 && $0 <= 0x7A)
            || $0 == 0x2D || $0 == 0x2E || $0 == 0x5F || $0 == 0x7E },
        "a base with a byte outside a plain authority: \(base)")
    return 0
}
