import HTTPGrammar
import TestKit
import Testing

@testable import MetCore
@testable import MetEngine

@Suite("ETags, header fields and logging")
struct SupportTests {
    @Test func strongETagsAreStableQuotedAndDifferPerBody() {
        let tag = ETag.strong(for: Array("hello".utf8))
        #expect(tag == ETag.strong(for: Array("hello".utf8)))
        #expect(tag == "\"a430d84680aabd0b-5\"")
        #expect(ETag.strong(for: []) == "\"cbf29ce484222325-0\"")
        #expect(ETag.strong(for: Array("hellp".utf8)) != tag)
    }

    @Test(arguments: [
        ("\"a\"", "\"a\"", true), ("W/\"a\"", "\"a\"", true), ("\"a\"", "W/\"a\"", true), ("*", "\"a\"", true),
        ("\"b\", \"a\"", "\"a\"", true), ("\"b\",\t\"a\" ", "\"a\"", true), ("\"b\"", "\"a\"", false),
        ("a", "\"a\"", false), ("", "\"a\"", false), ("\"a\"x", "\"a\"", false),
    ])
    func ifNoneMatchUsesWeakComparison(field: String, etag: String, matches: Bool) {
        #expect(ETag.ifNoneMatch(field, matches: etag) == matches)
    }

    @Test func headerNamesCompareCaseInsensitively() {
        var fields: HTTPFields = ["Content-Type": "a", "X-One": "1"]
        #expect(fields["content-type"] == "a")
        #expect(fields["CONTENT-TYPE"] == "a")
        #expect(fields["Content-Typ"] == nil)
        #expect(fields["Content-Typee"] == nil)
        fields.append("x-one", "2")
        #expect(fields["X-ONE"] == "1")
        #expect(fields.count == 3)
        fields.set("X-One", "3")
        #expect(fields["x-one"] == "3")
        #expect(fields.count == 2)
        fields.remove("CONTENT-type")
        #expect(fields.map(\.name) == ["X-One"])
    }

    @Test(arguments: [("a-b", "A-B", true), ("a[b", "A{B", false), ("@", "`", false), ("1", "1", true), ("", "", true)])
    func caseInsensitiveEqualityOnlyFoldsLetters(a: String, b: String, equal: Bool) {
        #expect(Grammar.equalsIgnoringCase(a.utf8, b.utf8) == equal)
    }

    @Test func tokenBytesAreExactlyRFC9110sTchar() {
        // tchar = "!" / "#" / "$" / "%" / "&" / "'" / "*" / "+" / "-" / "." / "^" / "_" / "`" / "|"
        //       / "~" / DIGIT / ALPHA
        let tchar = Set("!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ".utf8)
        for byte in UInt8.min...UInt8.max {
            #expect(Grammar.isTokenByte(byte) == tchar.contains(byte), "byte \(byte)")
        }
    }

    @Test func theLoggerWritesOnlyEnabledLevelsAndBuildsNoOtherMessage() {
        let log = MemoryLog()
        let logger = log.logger(level: .warning)
        let built = Locked(0)
        func message(_ text: String) -> String {
            built.withLock { $0 += 1 }
            return text
        }
        logger.debug(message("d"))
        logger.info(message("i"))
        logger.warning(message("w"))
        logger.error(message("e"))
        #expect(log.lines == ["warning: w", "error: e"])
        #expect(built.withLock { $0 } == 2)
        #expect(!logger.isEnabled(.info))
        #expect(logger.isEnabled(.error))
    }

    @Test(arguments: [("debug", LogLevel.debug), ("INFO", .info), ("Warning", .warning), ("error", .error)])
    func logLevelsParseByName(name: String, level: LogLevel) {
        #expect(LogLevel(name: name) == level)
        #expect(LogLevel(name: level.name) == level)
    }

    @Test func anUnknownLogLevelIsNil() {
        #expect(LogLevel(name: "verbose") == nil)
        #expect(LogLevel(name: "") == nil)
    }

    @Test func theServiceLogsNothingAboveDebugForAHit() async {
        let upstream = FakeUpstream([Sample.objectKey(1): .json(Sample.object(1))])
        let harness = Harness(upstream: upstream)
        _ = await harness.get("/objects/1")
        _ = await harness.get("/objects/1")
        #expect(!harness.log.lines.contains { $0.hasPrefix("warning:") || $0.hasPrefix("error:") })
    }
}
