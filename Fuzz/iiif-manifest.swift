// libFuzzer harness: a IIIF manifest made from any record bytes (`IIIFRecord.read`, then
// `IIIFManifest.body`): never a trap, always a JSON document, one canvas per image, and no image
// URL that is not an http(s) URL on a metmuseum.org host.
import Foundation

@testable import MetCore
@testable import MetEngine

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzIIIFManifest(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let record = IIIFRecord.read(Array(UnsafeBufferPointer(start: data, count: size)))
    let manifest = IIIFManifest(record: record, id: 7, base: "http://127.0.0.1:8080")
    let body = manifest.body
    guard let document = try? JSONSerialization.jsonObject(with: Data(body)) as? [String: Any] else {
        preconditionFailure("not a JSON object: \(String(decoding: body.prefix(300), as: UTF8.self))")
    }
    let canvases = document["items"] as? [[String: Any]] ?? []
    precondition(canvases.count == manifest.images.count, "\(canvases.count) canvases, \(manifest.images.count) images")
    for image in manifest.images {
        precondition(MetWebPage.normalized(image) == image, "an image URL that is not the Met's: \(image)")
    }
    let (width, height) = manifest.canvasSize
    precondition((1...IIIFManifest.canvasSide).contains(width) && (1...IIIFManifest.canvasSide).contains(height))
    return 0
}
