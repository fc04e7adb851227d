import Foundation
import Testing

@testable import MetCore
@testable import MetEngine

@Suite("JSONWriter")
struct JSONWriterTests {
    private func text(_ build: (inout JSONWriter) -> Void) -> String {
        var writer = JSONWriter()
        build(&writer)
        return String(decoding: writer.bytes, as: UTF8.self)
    }

    @Test func writesObjectsArraysAndScalarsWithCommasBetweenMembers() {
        let json = text { json in
            json.beginObject()
            json.member("a", int: 1)
            json.member("b", string: "two")
            json.member("c", bool: true)
            json.key("d")
            json.null()
            json.key("e")
            json.beginArray()
            json.int(-1)
            json.bool(false)
            json.beginObject()
            json.endObject()
            json.beginArray()
            json.endArray()
            json.double(1.5)
            json.endArray()
            json.key("f")
            json.beginObject()
            json.member("g", int: 0)
            json.endObject()
            json.key("h")
            json.raw(Array(#"{"x":[1, 2]}"#.utf8))
            json.endObject()
        }
        #expect(json == #"{"a":1,"b":"two","c":true,"d":null,"e":[-1,false,{},[],1.5],"f":{"g":0},"h":{"x":[1, 2]}}"#)
    }

    @Test(arguments: [
        ("plain", #""plain""#),
        ("quote \" mark", #""quote \" mark""#),
        ("back \\ slash", #""back \\ slash""#),
        ("line\nfeed\rreturn\ttab", #""line\nfeed\rreturn\ttab""#),
        ("\u{0}\u{1}\u{8}\u{c}\u{1f}", #""\u0000\u0001\u0008\u000c\u001f""#),
        ("\u{7f} é 漢 🎨 /", "\"\u{7f} é 漢 🎨 /\""),
    ])
    func stringsAreEscaped(value: String, expected: String) throws {
        let json = text { $0.string(value) }
        #expect(json == expected)
        let decoded = try JSONSerialization.jsonObject(with: Data(json.utf8), options: [.fragmentsAllowed]) as? String
        #expect(decoded == value)
    }

    @Test func keysAreEscapedToo() throws {
        let json = text { json in
            json.beginObject()
            json.member("we\"ird\nkey", int: 1)
            json.endObject()
        }
        let object = try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Int]
        #expect(object == ["we\"ird\nkey": 1])
    }

    @Test(arguments: [Double.nan, .infinity, -.infinity])
    func nonFiniteNumbersBecomeNull(value: Double) {
        let json = text { json in
            json.beginArray()
            json.double(value)
            json.int(1)
            json.endArray()
        }
        #expect(json == "[null,1]")
    }

    @Test func extremeIntegersAreWrittenExactly() {
        let json = text { json in
            json.beginArray()
            json.int(Int.min)
            json.int(Int.max)
            json.endArray()
        }
        #expect(json == "[-9223372036854775808,9223372036854775807]")
    }
}
