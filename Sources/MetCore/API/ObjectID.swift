import MetEngine

/// Object IDs as clients write them.
enum ObjectID {
    /// The largest ID accepted; the Met's IDs are well below it.
    static let maximum = Int(Int32.max)

    /// Parses a path segment into a positive object ID: ASCII digits only, no sign, no leading
    /// zero, at most `maximum`. Throws `invalid_object_id` otherwise.
    static func parse(_ text: String) throws(Problem) -> Int {
        let digits = text.utf8
        guard !digits.isEmpty, digits.count <= 10, digits.allSatisfy({ (0x30...0x39).contains($0) }),
            digits.first != 0x30, let id = Int(text), id <= maximum
        else {
            throw Problem(
                .invalidObjectID,
                "'\(text.prefix(40))' is not an object ID: expected a positive integer from 1 to \(maximum), "
                    + "written with digits only.")
        }
        return id
    }
}
