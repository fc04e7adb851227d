import Foundation
import MetEngine
import MetGzip
import Testing

/// The gzip copies themet keeps, made by libdeflate, checked by another implementation: the
/// system's `gzip -dc` (zlib's inflate) must give back exactly the bytes compressed. And the
/// upstream's gzip bodies read back (`Gzip.decompress`): whole members within the limit only.
@Suite("gzip copies inflate to their bodies")
struct GzipTests {
    /// Bodies of every shape a copy is made of: empty, one byte, JSON around the threshold, a
    /// real record, incompressible bytes, and a long repetitive body.
    static let bodies: [[UInt8]] = {
        var random = SplitMix64(seed: 26)
        let record = Array(#"{"objectID":436535,"title":"Wheat Field with Cypresses","tags":null}"#.utf8)
        return [
            [],
            [0x61],
            Array(String(repeating: #"{"objectID":1,"title":"Ťitle ✓"},"#, count: 32).utf8),
            record,
            (0..<300_000).map { _ in UInt8(truncatingIfNeeded: random.next()) },
            Array(String(repeating: "Vincent van Gogh, 1889. ", count: 80_000).utf8),
        ]
    }()

    @Test(arguments: 0..<bodies.count)
    func aCopyInflatesToItsBody(index: Int) async throws {
        let body = Self.bodies[index]
        let compressed = Gzip.compress(body)
        #expect(compressed.starts(with: [0x1F, 0x8B, 0x08]))  // a gzip member, deflate
        #expect(try await Gunzip.inflate(compressed) == body)
    }

    @Test func copiesMadeOnManyThreadsAtOnceEachInflateToTheirOwnBody() async throws {
        // More threads than the pool keeps compressors: some calls make their own.
        let copies = await withTaskGroup(of: (Int, [UInt8]).self) { group in
            for index in 0..<24 {
                group.addTask {
                    let body = Array("body \(index): ".utf8) + Self.bodies[5].prefix(50_000 + index)
                    return (index, Gzip.compress(body))
                }
            }
            var copies: [Int: [UInt8]] = [:]
            for await (index, copy) in group { copies[index] = copy }
            return copies
        }
        for (index, copy) in copies {
            #expect(
                try await Gunzip.inflate(copy) == Array("body \(index): ".utf8) + Self.bodies[5].prefix(50_000 + index))
        }
    }

    @Test(arguments: 0..<bodies.count)
    func aMemberInflatesToItsBodyWithinTheLimitAndNotBeyond(index: Int) {
        let body = Self.bodies[index]
        let member = Gzip.compress(body)
        #expect(Gzip.decompress(member, limit: body.count) == .success(body))
        if !body.isEmpty { #expect(Gzip.decompress(member, limit: body.count - 1) == .failure(.tooLarge)) }
    }

    @Test func whatIsNotOneWholeMemberIsDamaged() {
        let body = Self.bodies[3]
        let member = Gzip.compress(body)
        var flipped = member
        flipped[member.count / 2] ^= 0x01
        // Its length field one short of the body: the output ends before the stream does.
        var lying = member
        lying.replaceSubrange(
            (member.count - 4)..., with: withUnsafeBytes(of: UInt32(body.count - 1).littleEndian, Array.init))
        let damaged = [
            [], Array(member.prefix(19)), Array(member.dropLast()), member + [0], member + member, flipped, lying,
        ]
        for bytes in damaged { #expect(Gzip.decompress(bytes, limit: 1 << 20) == .failure(.damaged)) }
    }
}
