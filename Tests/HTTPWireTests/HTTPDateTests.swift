import HTTPWire
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
}
