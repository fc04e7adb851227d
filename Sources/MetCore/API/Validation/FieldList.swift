import MetEngine

/// The value of a `fields=` parameter (`/objects/{id}`, `/search`): the members to keep in each
/// object record, written `a,b,c`.
///
/// A list holds 1 to `maxCount` names joined by commas; each name is 1 to `maxNameLength`
/// ASCII letters, digits or `_` (every top-level member of a Met record has such a name). An
/// empty name, a space, a dot or any other byte makes the whole list invalid, so a client learns
/// of a typo instead of silently getting fewer members. Repeated names count once.
public struct FieldList: Sendable, Equatable {
    /// The member names, each once.
    public let names: Set<String>

    /// The most names one list may hold.
    public static let maxCount = 64
    /// The longest name, in bytes.
    public static let maxNameLength = 64

    /// Parses `text`; throws `invalid_parameter` naming `fields` when it is not such a list.
    public init(parsing text: String) throws(Problem) {
        let names = text.utf8.split(separator: UInt8(ascii: ","), omittingEmptySubsequences: false)
        guard (1...Self.maxCount).contains(names.count), names.allSatisfy(Self.isName) else {
            throw Problem(
                .invalidParameter,
                "fields must be 1 to \(Self.maxCount) member names joined by commas, such as "
                    + "objectID,title,primaryImageSmall.",
                parameter: "fields")
        }
        self.names = Set(names.map { String(Substring($0)) })
    }

    /// 1 to `maxNameLength` ASCII letters, digits and `_`.
    private static func isName(_ name: Substring.UTF8View) -> Bool {
        (1...maxNameLength).contains(name.count)
            && name.allSatisfy { byte in
                switch byte {
                case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                    UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"):
                    true
                default:
                    false
                }
            }
    }
}
