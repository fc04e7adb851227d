import MetEngine

extension LocalSearchPage {
    /// `"facets": {name: {"values": [{"value", "count"}], "others"}}` for `facets`, in that order.
    /// A value is null for matches without one; a department's also names its `departmentId` when
    /// the name is one the Met's departments are known by (`MetDepartments`), and a century has a
    /// `label` ("19th century", "5th century BCE").
    func writeFacets(_ facets: [SearchFacet], to json: inout JSONWriter) {
        json.key("facets")
        json.beginObject()
        for facet in facets {
            let counts = self.facets[facet] ?? FacetCounts(values: [], others: 0)
            json.key(facet.rawValue)
            json.beginObject()
            json.key("values")
            json.beginArray()
            for count in counts.values {
                json.beginObject()
                json.key("value")
                switch count.value {
                case .none: json.null()
                case .text(let text): json.string(text)
                case .integer(let number): json.int(number)
                case .bool(let flag): json.bool(flag)
                }
                if case .text(let name) = count.value, facet == .department, let id = MetDepartments.id(named: name) {
                    json.member("departmentId", int: id)
                }
                if case .integer(let century) = count.value, facet == .century {
                    json.member("label", string: Self.label(ofCentury: century))
                }
                json.member("count", int: count.count)
                json.endObject()
            }
            json.endArray()
            json.member("others", int: counts.others)
            json.endObject()
        }
        json.endObject()
    }

    /// "1st century", "19th century", "5th century BCE".
    static func label(ofCentury century: Int) -> String {
        let number = abs(century)
        let suffix =
            switch (number % 10, number % 100) {
            case (_, 11...13): "th"
            case (1, _): "st"
            case (2, _): "nd"
            case (3, _): "rd"
            default: "th"
            }
        return "\(number)\(suffix) century" + (century < 0 ? " BCE" : "")
    }
}
