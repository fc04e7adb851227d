// libFuzzer harness: what the cache reads from the Met's bodies (`JSONReader`, through
// `ObjectSummary(json:)` and `IDList(json:)`), held to Foundation's `JSONDecoder` with the same
// members (`JSONDecoderOracle`): the same values from every body the decoder accepts, a refusal of
// every body it refuses, and more refusals only for what RFC 8259 does not allow.
import TestKit

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzUpstreamJSON(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let body = Array(UnsafeBufferPointer(start: data, count: size))
    if let difference = JSONDecoderOracle.difference(body) {
        preconditionFailure("\(difference), for \(String(decoding: body, as: UTF8.self))")
    }
    return 0
}
