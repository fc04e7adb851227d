import Testing

@testable import HTTPWire

@Suite("Chunked request bodies")
struct ChunkedDecoderTests {
    /// Feeds `text` to one decoder in pieces of `step` bytes, keeping unconsumed bytes like a
    /// connection does. Returns the body and the bytes left after it, or nil if incomplete.
    private func decode(_ text: String, step: Int = .max, limit: Int = 1_000, trailerLimit: Int = 1_000)
        throws -> (body: String, rest: String)?
    {
        let bytes = Array(text.utf8)
        var decoder = ChunkedDecoder(limit: limit, trailerLimit: trailerLimit)
        var pending: [UInt8] = []
        var fed = 0
        while !decoder.isComplete && fed < bytes.count {
            let next = min(bytes.count, fed + max(1, min(step, bytes.count)))
            pending += bytes[fed..<next]
            fed = next
            let consumed = try pending.withUnsafeBytes { (buffer) in try decoder.decode(buffer) }
            #expect(consumed <= pending.count)
            pending.removeFirst(consumed)
        }
        guard decoder.isComplete else { return nil }
        return (String(decoding: decoder.body, as: UTF8.self), String(decoding: pending + bytes[fed...], as: UTF8.self))
    }

    private func failure(_ text: String, limit: Int = 1_000, trailerLimit: Int = 1_000) -> FailureKind? {
        do {
            _ = try decode(text, limit: limit, trailerLimit: trailerLimit)
            return nil
        } catch {
            return (error as? WireError).map(FailureKind.init)
        }
    }

    @Test(arguments: [
        ("4\r\nWiki\r\n6\r\npedia \r\nE\r\nin \r\n\r\nchunks.\r\n0\r\n\r\n", "Wikipedia in \r\n\r\nchunks."),
        ("0\r\n\r\n", ""),
        ("a\r\n0123456789\r\nA\r\n0123456789\r\n0\r\n\r\n", "01234567890123456789"),
        ("005\r\nhello\r\n000\r\n\r\n", "hello"),
        ("5 \r\nhello\r\n0\t\r\n\r\n", "hello"),
        ("5;a\r\nhello\r\n0\r\n\r\n", "hello"),
        ("5 ; a = b ; c=\"q \\\" ;x\"\r\nhello\r\n0;end\r\n\r\n", "hello"),
        ("5;a=\"\u{80}\"\r\nhello\r\n0\r\n\r\n", "hello"),
        ("1\r\na\r\n0\r\nX-Trailer: y\r\nX-Other:\r\n\r\n", "a"),
    ])
    func decodesWellFormedBodiesHoweverTheyAreSplit(encoded: String, body: String) throws {
        for step in [1, 2, 3, 7, Int.max] {
            let decoded = try #require(try decode(encoded + "NEXT", step: step), "step \(step)")
            #expect(decoded.body == body, "step \(step)")
            #expect(decoded.rest == "NEXT", "step \(step)")
        }
    }

    @Test func isIncompleteAtEveryCut() throws {
        let body = "4\r\nWiki\r\n6;e=1\r\npedia \r\n0\r\nX: y\r\n\r\n"
        for cut in 0..<body.utf8.count {
            #expect(try decode(String(body.utf8.prefix(cut))!) == nil, "cut at \(cut)")
        }
    }

    @Test(arguments: [
        "5\nhello\r\n0\r\n\r\n", "5\r\nhello\n0\r\n\r\n", "5\r\nhello\r\n0\n\r\n", "0\r\n\n",
        "0\r\nX: y\n\r\n", "5;a\nb\r\nhello\r\n0\r\n\r\n", "5\r\nhello\r0\r\n\r\n", "5\r\nhelloXY0\r\n\r\n",
        "5\rx\nhello\r\n0\r\n\r\n",
    ])
    func bareLineFeedsAndCarriageReturnsAreRefused(encoded: String) {
        #expect(failure(encoded) == .malformed)
    }

    @Test(arguments: [
        "5 zz\r\nhello\r\n0\r\n\r\n", "zz\r\nab\r\n0\r\n\r\n", "0x5\r\nhello\r\n0\r\n\r\n", "-5\r\nhello\r\n0\r\n\r\n",
        "+5\r\nhello\r\n0\r\n\r\n", "\r\nhello\r\n0\r\n\r\n", " 5\r\nhello\r\n0\r\n\r\n", "5;\r\nhello\r\n0\r\n\r\n",
        "5;=b\r\nhello\r\n0\r\n\r\n", "5;a=\r\nhello\r\n0\r\n\r\n", "5;a=\"b\r\nhello\r\n0\r\n\r\n",
        "5;a=b c\r\nhello\r\n0\r\n\r\n", "5;a\u{1}b\r\nhello\r\n0\r\n\r\n", "5;a=\"\u{1}\"\r\nhello\r\n0\r\n\r\n",
        "5;a=\"\\\u{7F}\"\r\nhello\r\n0\r\n\r\n", "5;a\u{7F}\r\nhello\r\n0\r\n\r\n", "5 5\r\nhello\r\n0\r\n\r\n",
        "2\r\nabc\r\n0\r\n\r\n",
    ])
    func malformedChunkSizeLinesAndExtensionsAreRefused(encoded: String) {
        #expect(failure(encoded) == .malformed)
    }

    @Test(arguments: [
        "0\r\nNo colon\r\n\r\n", "0\r\nX : y\r\n\r\n", "0\r\n: y\r\n\r\n", "0\r\nX: y\r\n z\r\n\r\n",
        "0\r\nX: a\u{1}b\r\n\r\n", "0\r\nX(: y\r\n\r\n",
    ])
    func malformedTrailerLinesAreRefused(encoded: String) {
        #expect(failure(encoded) == .malformed)
    }

    @Test func sizesAreBoundedWithoutOverflow() {
        #expect(failure("5\r\nhello\r\n0\r\n\r\n", limit: 4) == .bodyTooLarge)
        #expect(failure("3\r\nabc\r\n3\r\nabc\r\n0\r\n\r\n", limit: 5) == .bodyTooLarge)
        #expect(failure("FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF\r\n") == .bodyTooLarge)
        #expect(failure(String(repeating: "0", count: 5_000) + "\r\n") == .malformed)
        #expect(failure(String(repeating: "0", count: 4_000) + "5\r\nhello\r\n0\r\n\r\n") == nil)
        #expect(failure("0\r\n" + String(repeating: "X: y\r\n", count: 200), trailerLimit: 1_000) == .trailerTooLarge)
    }

    @Test func consumesEachByteOnceAndWaitsOnlyForALine() throws {
        // A large chunk split into single bytes: every data byte is consumed as it arrives.
        var decoder = ChunkedDecoder(limit: 100_000, trailerLimit: 100)
        let head = Array("FFFF\r\n".utf8)
        #expect(try head.withUnsafeBytes { (buffer) in try decoder.decode(buffer) } == head.count)
        for _ in 0..<0xFFFF {
            #expect(try [UInt8(ascii: "a")].withUnsafeBytes { (buffer) in try decoder.decode(buffer) } == 1)
        }
        let tail = Array("\r\n0\r\n".utf8)
        #expect(try tail.withUnsafeBytes { (buffer) in try decoder.decode(buffer) } == tail.count)
        #expect(!decoder.isComplete)
        let end = Array("\r\nGET".utf8)
        #expect(try end.withUnsafeBytes { (buffer) in try decoder.decode(buffer) } == 2)
        #expect(decoder.isComplete && decoder.body.count == 0xFFFF)
    }
}
