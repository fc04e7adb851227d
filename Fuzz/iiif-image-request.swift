// libFuzzer harness: the IIIF Image API's request syntax (`IIIFImageRequest.parse`, the path after
// `/iiif/`) and its reading against pictures of several sizes (`plan(within:)`).
@testable import MetCore
@testable import MetEngine

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzIIIFImageRequest(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    guard let request = try? IIIFImageRequest.parse(text) else { return 0 }
    precondition((1...Int(Int32.max)).contains(request.objectID) && request.index >= 0, "\(text)")
    guard case .image(let parameters) = request.operation else { return 0 }
    for (width, height) in [(1, 1), (4_000, 3_000), (3, 7_000), (65_535, 65_535)] {
        let bounds = IIIFImageBounds(width: width, height: height)
        guard let (derivation, canonical) = try? parameters.plan(within: bounds) else { continue }
        // A derivation never reaches outside the picture, never has an empty side, never exceeds
        // the bounds, and its canonical form plans to the very same derivation.
        precondition(derivation.x >= 0 && derivation.y >= 0 && derivation.regionWidth >= 1, "\(text)")
        precondition(derivation.regionHeight >= 1 && derivation.x + derivation.regionWidth <= width, "\(text)")
        precondition(derivation.y + derivation.regionHeight <= height, "\(text)")
        precondition(derivation.width >= 1 && derivation.height >= 1 && derivation.width <= width, "\(text)")
        precondition(derivation.height <= height && derivation.width * derivation.height <= width * height, "\(text)")
        precondition((0...3).contains(derivation.quarters), "\(text)")
        guard case .image(let again) = try! IIIFImageRequest.parse("1/0/" + canonical).operation else {
            preconditionFailure("\(canonical) is not an image request")
        }
        precondition(try! again.plan(within: bounds).derivation == derivation, "\(text) → \(canonical)")
    }
    return 0
}
