/// A TIFF's size, from the `ImageWidth` (256) and `ImageLength` (257) fields of its first image
/// file directory (TIFF 6.0 §2), in the byte order its header names.
enum TIFFHeader {
    /// More entries than any real first directory holds: a bound on the walk.
    private static let maxEntries = 4_096

    static func size(_ bytes: ByteReader) -> Result<(Int, Int), ImageHeaderError> {
        let little = bytes.byte(at: 0) == 0x49
        guard let directory = bytes.integer(at: 4, width: 4, little: little),
            let count = bytes.integer(at: directory, width: 2, little: little)
        else { return .failure(.truncated("TIFF ends before its first directory")) }
        guard directory >= 8, count <= maxEntries else { return .failure(.malformed("TIFF directory at \(directory)")) }
        var width: Int?
        var height: Int?
        for index in 0..<count {
            let entry = directory + 2 + index * 12
            guard let tag = bytes.integer(at: entry, width: 2, little: little),
                let type = bytes.integer(at: entry + 2, width: 2, little: little)
            else { return .failure(.truncated("TIFF ends inside its first directory")) }
            guard tag == 256 || tag == 257 else { continue }
            // SHORT (3) or LONG (4), one value, held in the entry itself.
            let value: Int?
            switch type {
            case 3: value = bytes.integer(at: entry + 8, width: 2, little: little)
            case 4: value = bytes.integer(at: entry + 8, width: 4, little: little)
            default: return .failure(.malformed("TIFF size field of type \(type)"))
            }
            guard let value else { return .failure(.truncated("TIFF ends inside its first directory")) }
            if tag == 256 { width = value } else { height = value }
        }
        guard let width, let height else { return .failure(.malformed("TIFF without ImageWidth and ImageLength")) }
        return .success((width, height))
    }
}
