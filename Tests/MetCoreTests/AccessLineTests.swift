import Foundation
import TestKit
import Testing

@testable import MetCore
@testable import MetEngine

@Suite("Access lines, log formats and timestamps")
struct AccessLineTests {
    private static func record(
        target: String = "/objects/436535", userAgent: String? = "curl/8.5.0", upstream: Double? = nil
    ) -> AccessRecord {
        AccessRecord(
            time: 1_764_646_351.123_2, client: "127.0.0.1", requestID: "5f0c2a9e4b7d1e83", method: "GET",
            target: target, status: 200, bytes: 1_989, duration: 0.001_04, cache: .hit, upstream: upstream,
            userAgent: userAgent)
    }

    @Test func aTextLineHasEveryFieldInItsPlace() {
        var line = AccessLine(format: .text)
        let text = String(decoding: line.bytes(for: Self.record()), as: UTF8.self)
        #expect(
            text
                == #"2025-12-02T03:32:31.123Z 127.0.0.1 5f0c2a9e4b7d1e83 "GET /objects/436535" 200 1989 1.04 hit - "curl/8.5.0""#
                + "\n")
        let waited = String(
            decoding: line.bytes(for: Self.record(userAgent: nil, upstream: 0.25)), as: UTF8.self)
        #expect(waited.hasSuffix(" 1.04 hit 250.00 -\n"))
    }

    @Test(arguments: ["a\"b", "back\\slash", "new\nline", "tab\there", "ünïcode", "\u{7F}del"])
    func quotedFieldsCannotBreakTheLine(hostile: String) throws {
        var line = AccessLine(format: .text)
        let bytes = line.bytes(for: Self.record(target: "/search?q=" + hostile, userAgent: hostile))
        #expect(bytes.filter { $0 == 0x0A } == [0x0A])
        #expect(bytes.last == 0x0A)
        #expect(bytes.allSatisfy { (0x20...0x7E).contains($0) || $0 == 0x0A })
        let text = String(decoding: bytes, as: UTF8.self)
        let pattern = #/^\S+ \S+ \S+ "((?:[^"\\]|\\.)*)" \d+ \d+ [\d.]+ \S+ \S+ "((?:[^"\\]|\\.)*)"$/#
        #expect(text.dropLast().wholeMatch(of: pattern) != nil, "\(text)")
    }

    @Test func aJSONLineIsOneObjectWithNullsForWhatIsAbsent() throws {
        var line = AccessLine(format: .json)
        let bytes = line.bytes(for: Self.record(target: "/x?\"", userAgent: nil))
        #expect(bytes.last == 0x0A)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(bytes.dropLast())) as? [String: Any])
        #expect(object["time"] as? String == "2025-12-02T03:32:31.123Z")
        #expect(object["type"] as? String == "access")
        #expect(object["requestId"] as? String == "5f0c2a9e4b7d1e83")
        #expect(object["target"] as? String == "/x?\"")
        #expect(object["status"] as? Int == 200)
        #expect(object["durationMs"] as? Double == 1.04)
        #expect(object["cache"] as? String == "hit")
        #expect(object["upstreamMs"] is NSNull)
        #expect(object["userAgent"] is NSNull)
    }

    @Test func timestampsAgreeWithFoundationAcrossTheCalendar() {
        var generator = SplitMix64(seed: 7)
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        formatter.timeZone = TimeZone(identifier: "UTC")
        for _ in 0..<2_000 {
            let milliseconds = Double(generator.next() % 253_402_300_799_000)  // up to 9999-12-31
            let seconds = milliseconds / 1_000
            #expect(Timestamp.rfc3339(seconds) == formatter.string(from: Date(timeIntervalSince1970: seconds)))
        }
        #expect(Timestamp.rfc3339(0) == "1970-01-01T00:00:00.000Z")
        #expect(Timestamp.rfc3339(951_782_400.5) == "2000-02-29T00:00:00.500Z")
    }

    @Test func logLinesInEachFormat() throws {
        let log = MemoryLog()
        for format in LogFormat.allCases {
            Logger(level: .info, format: format, sink: log.sink, clock: { 1_764_646_351.5 }).warning(
                "a \"quoted\" word")
        }
        #expect(log.lines[0] == #"2025-12-02T03:32:31.500Z warning: a "quoted" word"#)
        let json = try #require(
            try JSONSerialization.jsonObject(with: Data(log.lines[1].utf8)) as? [String: String])
        #expect(json == ["time": "2025-12-02T03:32:31.500Z", "level": "warning", "message": #"a "quoted" word"#])
        #expect(log.lines[2] == #"warning: a "quoted" word"#)
    }

    @Test func aProblemDocumentCarriesItsRequestID() throws {
        let problem = Problem(.invalidObjectID, "no").response
        let identified = Problem.identified(problem, requestID: "abc-1")
        #expect(try identified.jsonObject()["requestId"] as? String == "abc-1")
        #expect(try identified.jsonObject()["code"] as? String == "invalid_object_id")
        #expect(Problem.identified(problem, requestID: nil).body == problem.body)
        let plain = Response(status: 404, headers: ["Content-Type": Response.jsonContentType], body: Array("{}".utf8))
        #expect(Problem.identified(plain, requestID: "abc-1").body == plain.body)
    }
}
