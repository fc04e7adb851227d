import Foundation
import TestKit
import Testing

@testable import MetEngine

/// `JSONReader` against `JSONDecoderOracle`: what Foundation's decoder read from the same bodies.
@Suite("JSONReader reads what JSONDecoder read, and refuses what it refused")
struct JSONReaderTests {
    /// Bodies that stress one rule each: numbers, strings, escapes, UTF-8, nesting, literals,
    /// types and what may follow the document.
    static let edgeCases: [String] = [
        #"{"objectID":1}"#, " \t\r\n{ \"objectID\" : 1 } \n", #"{"objectID":1.0}"#, #"{"objectID":1e0}"#,
        #"{"objectID":1E+2}"#, #"{"objectID":-0}"#, #"{"objectID":1.5}"#, #"{"objectID":9223372036854775807}"#,
        #"{"objectID":9223372036854775808}"#, #"{"objectID":-9223372036854775808}"#, #"{"objectID":1e400}"#,
        #"{"objectID":"1"}"#, #"{"objectID":null}"#, "{}", #"{"objectID":01}"#, #"{"objectID":-}"#,
        #"{"objectID":1.}"#, #"{"objectID":.5}"#, #"{"objectID":1e}"#, #"{"objectID":+1}"#, #"{"objectID":NaN}"#,
        #"{"objectID":1,"title":"\u00e9\ud83d\ude00\n\"\\\/\b\f\r\t"}"#, #"{"objectID":1,"title":"\ud83d"}"#,
        #"{"objectID":1,"title":"\ude00"}"#, #"{"objectID":1,"title":"\ud83d\u0041"}"#,
        #"{"objectID":1,"title":"\u12g4"}"#, #"{"objectID":1,"title":"\x41"}"#, "{\"objectID\":1,\"title\":\"a\tb\"}",
        #"{"objectID":1,"title":"Título ✓ 🌻"}"#, #"{"objectID":1,"objectID":2}"#, #"{"objectID":1} x"#,
        #"{"objectID":1},"#, #"{"objectID":1}{}"#, #"{"objectID":1,}"#, #"{"objectID":1 "title":"a"}"#,
        #"{"objectID":1,"x":tru}"#, #"{"objectID":1,"x":True}"#, #"{"objectID":1,"x":[1,2,{"a":[null,false]}]}"#,
        #"{"objectID":1,"x":[1,]}"#, #"{"objectID":1,"x":{"a"}}"#, #"[{"objectID":1}]"#, #""objectID""#, "", "  ",
        #"{"objectID":1,"isPublicDomain":1}"#, #"{"objectID":1,"isPublicDomain":"true"}"#,
        #"{"objectID":1,"isPublicDomain":true}"#, #"{"objectID":1,"objectBeginDate":-500.0}"#,
        #"{"objectID":1,"objectBeginDate":"1"}"#, #"{"objectID":1,"title":7}"#, #"{"objectID":1,"title":null}"#,
        #"{"objectID":1,"medium":["a"]}"#, #"{"\u006fbjectID":5}"#, #"{"objectID":1,"title":"a","title":"b"}"#,
        "\u{FEFF}{\"objectID\":1}",
        #"{"objectID":1,"deep":"# + String(repeating: "[", count: 511) + String(repeating: "]", count: 511) + "}",
        #"{"objectID":1,"deep":"# + String(repeating: "[", count: 512) + String(repeating: "]", count: 512) + "}",
        #"{"total":0,"objectIDs":null}"#, #"{"total":2,"objectIDs":[1,2]}"#, #"{"total":1}"#, #"{"objectIDs":[1]}"#,
        #"{"total":2,"objectIDs":[1,"2"]}"#, #"{"total":2,"objectIDs":[1,null]}"#,
        #"{"total":2,"objectIDs":[1.0,2e0]}"#,
        #"{"total":1,"objectIDs":[[1]]}"#, #"{"total":1,"objectIDs":[ 1 , 2 ]}"#, #"{"total":1,"objectIDs":{}}"#,
        #"{"total":1.5,"objectIDs":[]}"#, #"{"total":3,"objectIDs":[-1,0,1]}"#,
    ]

    @Test func whatTheDecoderLetThroughAndRFC8259DoesNotIsRefused() {
        for body in [
            #"{"objectID":1,}"#, #"{"objectID":1,"x":[1,]}"#, "\u{FEFF}{\"objectID\":1}",
            #"{"objectID":1,"x":"\#u{0E}"}"#,
            #"{"objectID":1,"x":1..5}"#, #"{"objectID":1.0}"#, #"{"objectID":1e2}"#,
            #"{"objectID":1.0000000000000001}"#,
            #"{"total":1,"objectIDs":[1,2.0]}"#, #"{"objectID":1,"objectBeginDate":-5e2}"#,
        ] {
            #expect(ObjectSummary(json: Array(body.utf8)) == nil)
            #expect(JSONDecoderOracle.isLenient(Array(body.utf8)))
        }
        #expect(!JSONDecoderOracle.isLenient(Array(#"{"objectID":1,"title":",}","x":[{"y":1.5}],"z":2e3}"#.utf8)))
        // A name given twice counts by its first value, as in the decoder.
        #expect(ObjectSummary(json: Array(#"{"objectID":1,"objectID":2}"#.utf8))?.objectID == 1)
    }

    /// Bytes that are not UTF-8 (an overlong form, a surrogate, past U+10FFFF, cut short, a
    /// lone continuation byte) and some that are, inside a title.
    static let byteCases: [[UInt8]] = [
        [0xC0, 0x80], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80], [0xE2, 0x82],
        [0x80], [0xFF], [0xC3, 0xA9], [0xE2, 0x82, 0xAC], [0xF0, 0x9F, 0x8C, 0xBB], [0xEF, 0xBF, 0xBF],
    ].map {
        Array(#"{"objectID":1,"title":"a"#.utf8) + $0 + Array(#"b"}"#.utf8)
    }

    static func expectSameReading(_ body: [UInt8], sourceLocation: SourceLocation = #_sourceLocation) {
        let difference = JSONDecoderOracle.difference(body)
        #expect(difference == nil, "\(String(decoding: body, as: UTF8.self))", sourceLocation: sourceLocation)
    }

    @Test(arguments: edgeCases)
    func anEdgeCaseIsReadAsTheDecoderReadIt(_ body: String) {
        Self.expectSameReading(Array(body.utf8))
    }

    @Test(arguments: byteCases)
    func bytesInAStringAreReadAsTheDecoderReadThem(_ body: [UInt8]) {
        Self.expectSameReading(body)
    }

    @Test func everyFixtureRecordAndTenThousandDamagedCopiesAreReadAsTheDecoderReadThem() throws {
        let directory = Repository.fixtures + "/public/collection/v1/objects"
        let names = try FileManager.default.contentsOfDirectory(atPath: directory).sorted()
        let records = try names.map { [UInt8](try Data(contentsOf: URL(fileURLWithPath: directory + "/" + $0))) }
        #expect(records.count > 20)
        for record in records {
            Self.expectSameReading(record)
            #expect(ObjectSummary(json: record) != nil)
        }
        // Bytes flipped, dropped, doubled or replaced by a JSON delimiter, where the reader's
        // rules meet: the same verdict and the same values every time.
        var random = SplitMix64(seed: 2026)
        let delimiters = Array(#"{}[]",:\ -.0eEtfnu"#.utf8) + [0x00, 0x1F, 0x7F, 0xC3, 0xED, 0xF4]
        for _ in 0..<10_000 {
            var body = records[Int(random.next() % UInt64(records.count))]
            let index = Int(random.next() % UInt64(body.count))
            switch random.next() % 4 {
            case 0: body[index] ^= UInt8(truncatingIfNeeded: 1 << (random.next() % 8))
            case 1: body.remove(at: index)
            case 2: body.insert(body[index], at: index)
            default: body[index] = delimiters[Int(random.next() % UInt64(delimiters.count))]
            }
            Self.expectSameReading(body)
        }
    }
}
