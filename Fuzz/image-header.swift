// libFuzzer harness: an image file's header read without decoding (`ImageHeader.read`), and the
// image host's replies judged by it (`ImageResource.judge`): any bytes, never a trap.
import ImageHeaders
@testable import MetEngine

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzImageHeader(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    if case .success(let header) = ImageHeader.read(bytes) {
        precondition(header.width > 0 && header.height > 0, "a picture of no pixels")
        precondition(ImageHeader.Format.sniff(bytes) == header.format, "the format is not the magic bytes'")
    }
    let resource = ImageResource(path: "/CRDImages/ep/original/x.jpg", maxPixels: 50_000_000, maxBytes: 1 << 20)
    let reply = UpstreamReply(status: 200, contentType: "image/jpeg", body: bytes)
    if case .success(.image(let body, let details, _)) = resource.judge(reply) {
        let (pixels, overflow) = details.width.multipliedReportingOverflow(by: details.height)
        precondition(body == bytes && !overflow && pixels <= 50_000_000, "a picture past its bounds")
    }
    return 0
}
