import HTTPGrammar
import Testing

@Suite("The Date field line")
struct HTTPDateTests {
    @Test(arguments: [
        (0, "Thu, 01 Jan 1970 00:00:00 GMT"),
        (951_782_400, "Tue, 29 Feb 2000 00:00:00 GMT"),
        (1_795_979_268, "Sun, 29 Nov 2026 19:07:48 GMT"),
        (4_102_444_799, "Thu, 31 Dec 2099 23:59:59 GMT"),
        (-1, "Wed, 31 Dec 1969 23:59:59 GMT"),
        (253_402_300_799, "Fri, 31 Dec 9999 23:59:59 GMT"),
        (253_402_300_800, "Sat, 01 Jan 10000 00:00:00 GMT"),
        (-30_636_619_200, "Fri, 01 Mar 0999 12:00:00 GMT"),
    ])
    func formatsIMFFixdates(seconds: Int, expected: String) {
        #expect(HTTPDate.imfFixdate(seconds) == expected)
        var date = HTTPDate()
        #expect(date.line(at: seconds) == Array("Date: \(expected)\r\n".utf8))
    }

    /// Every date the formatter writes in 1–9999 reads back (the days-from-civil inverse).
    @Test(arguments: [0, 951_782_400, 1_795_979_268, 4_102_444_799, -1, 253_402_300_799, -30_636_619_200])
    func readsBackWhatItWrites(seconds: Int) {
        #expect(HTTPDate.seconds(HTTPDate.imfFixdate(seconds), now: 1_795_979_268) == seconds)
        let date = CivilDate(unixSeconds: seconds)
        #expect(
            CivilDate.unixSeconds(
                year: date.year, month: date.month, day: date.day, hour: date.hour, minute: date.minute,
                second: date.second) == seconds)
    }

    /// RFC 9110 §5.6.7's three formats, and what is none of them. `now` is in 2026: "94" is 1994,
    /// "70" 2070 (not more than 50 years ahead), "77" 1977.
    @Test(arguments: [
        ("Sun, 06 Nov 1994 08:49:37 GMT", 784_111_777), ("Sunday, 06-Nov-94 08:49:37 GMT", 784_111_777),
        ("Sun Nov  6 08:49:37 1994", 784_111_777), ("Sun Nov 16 08:49:37 1994", 784_975_777),
        ("Thursday, 01-Jan-70 00:00:00 GMT", 3_155_760_000), ("Saturday, 01-Jan-77 00:00:00 GMT", 220_924_800),
        ("Tue, 29 Feb 2000 00:00:00 GMT", 951_782_400),
    ])
    func readsTheThreeFormats(text: String, expected: Int) {
        #expect(HTTPDate.seconds(text, now: 1_795_979_268) == expected)
    }

    /// RFC 850's two-digit year is the one of the hundred years ending 50 years after now: in
    /// 2060, "05" and "10" are 2105 and 2110, "11" is 2011.
    @Test(arguments: [("05", 2105), ("10", 2110), ("11", 2011), ("60", 2060)])
    func twoDigitYearsFollowTheClock(digits: String, year: Int) throws {
        let now = try #require(CivilDate.unixSeconds(year: 2060, month: 6, day: 1, hour: 0, minute: 0, second: 0))
        #expect(
            HTTPDate.seconds("Monday, 01-Jan-\(digits) 00:00:00 GMT", now: now)
                == CivilDate.unixSeconds(year: year, month: 1, day: 1, hour: 0, minute: 0, second: 0))
    }

    @Test(arguments: [
        "", "Sun, 06 Nov 1994 08:49:37 UTC", "Sun, 6 Nov 1994 08:49:37 GMT", "sun, 06 nov 1994 08:49:37 GMT",
        "Sun, 06 Nov 1994 08:49:37 GMT ", " Sun, 06 Nov 1994 08:49:37 GMT", "Sun, 30 Feb 1994 08:49:37 GMT",
        "Sun, 06 Nov 1994 24:00:00 GMT", "Sun, 06 Nov 1994 08:60:00 GMT", "Sun, 06 Nov 1994 08:49:60 GMT",
        "Sun, 06 Xyz 1994 08:49:37 GMT", "Sun, 06 Nov 19x4 08:49:37 GMT", "Sunday, 06-Nov-1994 08:49:37 GMT",
        "Sun Nov 6 08:49:37 1994", "Sun, 06 Nov 1994 08:49:37 GMT, Mon, 07 Nov 1994 08:49:37 GMT",
        "1994-11-06T08:49:37Z", "Sun, 06 Nov 0000 08:49:37 GMT", "Sun, 06 Nov 1994 8:49:37 GMT",
    ])
    func refusesWhatIsNoHTTPDate(text: String) {
        #expect(HTTPDate.seconds(text, now: 1_795_979_268) == nil)
    }
}
