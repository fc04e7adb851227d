// libFuzzer harness: the incremental chunked decoder. The first byte picks how the rest is split
// across reads; decoding in pieces must give exactly what decoding in one go gives.
@testable import HTTPWire

private struct Outcome: Equatable {
    var body: [UInt8]?
    var consumed: Int
    /// The kind of failure (the case of `WireError`), its detail aside.
    var failure: Substring?
}

private func decode(_ bytes: UnsafeRawBufferPointer, step: Int) -> Outcome {
    var decoder = ChunkedDecoder(limit: 4_096, trailerLimit: 1_024)
    var consumed = 0
    var available = 0
    while !decoder.isComplete && available < bytes.count {
        available = min(bytes.count, available + step)
        do {
            let taken = try decoder.decode(UnsafeRawBufferPointer(rebasing: bytes[consumed..<available]))
            precondition(taken >= 0 && taken <= available - consumed, "consumed more than it was given")
            consumed += taken
        } catch {
            return Outcome(body: nil, consumed: consumed, failure: "\(error)".prefix { $0 != "(" })
        }
        precondition(decoder.body.count <= 4_096, "the body outgrew its limit")
    }
    return Outcome(body: decoder.isComplete ? decoder.body : nil, consumed: consumed, failure: nil)
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzChunkedDecoder(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size > 0 else { return 0 }
    let step = Int(data[0] % 16) + 1
    let bytes = UnsafeRawBufferPointer(start: data + 1, count: size - 1)
    let whole = decode(bytes, step: max(1, bytes.count))
    let pieces = decode(bytes, step: step)
    // The same bytes give the same body, end and failure, however they are split (where a
    // failure stops the decoder may differ by the piece it came in).
    precondition(whole.failure == pieces.failure && whole.body == pieces.body, "split: \(whole) vs \(pieces)")
    precondition(whole.failure != nil || whole.consumed == pieces.consumed, "split: \(whole) vs \(pieces)")
    return 0
}
