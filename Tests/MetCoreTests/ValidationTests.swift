import Testing

@testable import MetCore
@testable import MetEngine

@Suite("Parameter validation: calendar dates, fields lists and unknown parameters")
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
            return problem?.code == "invalid_parameter" && problem?.parameter == "fields"
        }
    }

    @Test func onlyAllowedParametersPass() throws {
        try RequestTarget(parsing: "/p?a=1&b=2").allowOnly(["a", "b"])
        try RequestTarget(parsing: "/p").allowOnly([])
    }

    @Test func aRepeatedParameterIsNamedAfterUnknownOnes() throws {
        #expect(throws: Problem(.invalidParameter, "a is given more than once.", parameter: "a")) {
            try RequestTarget(parsing: "/p?b=2&a=1&a=3&b=2").allowOnly(["a", "b"]) == ()
        }
        #expect(throws: Problem(.unknownParameter, "Unknown parameter 'c'. Known: a.", parameter: "c")) {
            try RequestTarget(parsing: "/p?a=1&a=3&c=1").allowOnly(["a"]) == ()
        }
    }

    static let unknownParameters: [(target: String, allowed: Set<String>, name: String, detail: String)] = [
        ("/p?a=1&c=2&d=3", ["a", "b"], "c", "Unknown parameter 'c'. Known: a, b."),
        ("/p?x=1", [], "x", "Unknown parameter 'x'. This route takes no parameters."),
        ("/p?A=1", ["a"], "A", "Unknown parameter 'A'. Known: a."),
    ]

    @Test(arguments: unknownParameters)
    func theFirstUnknownParameterIsNamed(target: String, allowed: Set<String>, name: String, detail: String) {
        #expect {
            try RequestTarget(parsing: target).allowOnly(allowed)
        } throws: { error in
            let problem = error as? Problem
            return problem?.code == "unknown_parameter" && problem?.parameter == name && problem?.detail == detail
        }
    }

    @Test func aRouteMayDescribeWhatItTakesAndALongNameIsCut() throws {
        let long = String(repeating: "n", count: 100)
        #expect {
            try RequestTarget(parsing: "/p?\(long)=1").allowOnly(["a"], known: "It takes a.")
        } throws: { error in
            let problem = error as? Problem
            let cut = String(repeating: "n", count: 60)
            return problem?.parameter == cut && problem?.detail == "Unknown parameter '\(cut)'. It takes a."
        }
    }
}
