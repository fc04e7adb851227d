import Foundation

/// Moving a user's file out of the way instead of deleting it, when it cannot be used (a damaged
/// `objects.json`, a cache database that is not one).
public enum SetAside {
    /// Renames `path` to `path.corrupt-<unix time>` (or `…-2`, `…-3`: never over an earlier one),
    /// and each existing `path + suffix` to the new name plus the same suffix. Returns the new name.
    /// Blocking file I/O.
    public static func move(_ path: String, companions suffixes: [String] = []) throws -> String {
        let aside = unusedName(path + ".corrupt-\(Int(Date().timeIntervalSince1970))")
        try FileManager.default.moveItem(atPath: path, toPath: aside)
        for suffix in suffixes where FileManager.default.fileExists(atPath: path + suffix) {
            try FileManager.default.moveItem(atPath: path + suffix, toPath: aside + suffix)
        }
        return aside
    }

    /// `path`, or `path-2`, `path-3`, … : the first that does not exist, so nothing set aside
    /// earlier is ever overwritten.
    private static func unusedName(_ path: String) -> String {
        var candidate = path
        var number = 1
        while FileManager.default.fileExists(atPath: candidate) {
            number += 1
            candidate = "\(path)-\(number)"
        }
        return candidate
    }
}
