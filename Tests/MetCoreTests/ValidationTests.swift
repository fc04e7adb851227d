import Testing

@testable import MetCore

@Suite("Parameter validation: calendar dates and fields lists")
struct ValidationTests {
    @Test(arguments: [
        ("2024-02-29", 2024, 2, 29), ("2000-02-29", 2000, 2, 29), ("1987-05-03", 1987, 5, 3),
        ("1987-12-31", 1987, 12, 31), ("0000-01-01", 0, 1, 1), ("9999-12-31", 9999, 12, 31),
    ])
    func aRealDayParsesIntoItsParts(text: String, year: Int, month: Int, day: Int) throws {
        let date = try #require(CalendarDate(parsing: text))
        #expect(date.year == year)
        #expect(date.month == month)
        #expect(date.day == day)
        #expect(CalendarDate(parsing: "x\(text)x".dropFirst().dropLast()) == date)
    }

    @Test(arguments: [
        "2023-02-29", "1900-02-29", "1987-13-01", "1987-00-10", "1987-04-31", "1987-01-32", "1987-01-00",
        "1987-5-3", "87-05-03", "1987/05/03", "1987-05-03T00:00:00Z", " 1987-05-03", "１９８７-05-03", "1987-0５-03",
        "+987-05-03", "-987-05-03", "1987-05-0a", "",
    ])
    func anythingButARealDayIsNil(text: String) {
        #expect(CalendarDate(parsing: text) == nil)
    }

    @Test(arguments: [
        "title", "objectID,title,primaryImageSmall", "a_1", "A9",
        (1...FieldList.maxCount).map { "f\($0)" }.joined(separator: ","),
        String(repeating: "a", count: FieldList.maxNameLength),
    ])
    func aWellFormedFieldsListGivesItsNames(text: String) throws {
        #expect(try FieldList(parsing: text).names == Set(text.split(separator: ",").map(String.init)))
    }

    @Test func aRepeatedNameCountsOnce() throws {
        #expect(try FieldList(parsing: "title,objectID,title").names == ["title", "objectID"])
    }

    @Test(arguments: [
        "", ",", "title,", ",title", "title,,objectID", "ti-tle", "title ", "café", "a.b", "tïtle",
        String(repeating: "a", count: FieldList.maxNameLength + 1),
        (1...FieldList.maxCount + 1).map { "f\($0)" }.joined(separator: ","),
    ])
    func aMalformedFieldsListIsInvalidParameterFields(text: String) {
        #expect {
            try FieldList(parsing: text)
        } throws: { error in
            let problem = error as? Problem
            return problem?.code == .invalidParameter && problem?.parameter == "fields"
        }
    }
}
