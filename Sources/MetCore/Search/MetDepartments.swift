/// The Met's departments by ID, with every name object records are known to give them: a record
/// names its department (`department`), not its ID, and not always as `/departments` does
/// (docs/MET-API.md §4). Local search maps a `departmentId` filter to these names.
package enum MetDepartments {
    /// The names records use that differ from `/departments`' display names.
    package static let aliases: [String: Int] = [
        "The American Wing": 1,
        "Ancient West Asian Art": 3,
        "The Michael C. Rockefeller Wing": 5,
        "Robert Lehman Collection": 15,
        "Modern and Contemporary Art": 21,
    ]

    /// `/departments`' display names (docs/MET-API.md §4).
    package static let displayNames: [Int: String] = [
        1: "American Decorative Arts", 3: "Ancient Near Eastern Art", 4: "Arms and Armor",
        5: "Arts of Africa, Oceania, and the Americas", 6: "Asian Art", 7: "The Cloisters", 8: "The Costume Institute",
        9: "Drawings and Prints", 10: "Egyptian Art", 11: "European Paintings",
        12: "European Sculpture and Decorative Arts", 13: "Greek and Roman Art", 14: "Islamic Art",
        15: "The Robert Lehman Collection", 16: "The Libraries", 17: "Medieval Art", 18: "Musical Instruments",
        19: "Photographs", 21: "Modern Art",
    ]

    /// Every name of department `id`, or nil for an ID the Met does not list (its search ignores
    /// those, and so does local search).
    package static func names(of id: Int) -> [String]? {
        guard let name = displayNames[id] else { return nil }
        return [name] + aliases.filter { $0.value == id }.map(\.key).sorted()
    }

    /// The ID of the department a record names `name`, or nil when it is not a known name.
    package static func id(named name: String) -> Int? {
        aliases[name] ?? displayNames.first { $0.value == name }?.key
    }
}
