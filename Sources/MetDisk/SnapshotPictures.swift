import Foundation
import MetEngine

/// The pictures a snapshot carries when asked (`themet export --images`, `GET
/// /cache/snapshot?images=true`): each picture of the image files' tier (`ImageFileTier`) as one
/// row of the snapshot's `pictures` table, its entry's record holding the bytes, so that the record's
/// checksum covers them and `CacheSnapshot.Rows` verifies them as it verifies the records.
///
/// The pictures are copied after the records, in one read of the picture index; a server may be
/// writing the tier meanwhile. A picture whose file no longer holds the bytes its row was stored
/// with (replaced, evicted or damaged since) is left out, as an unverifiable record is.
enum SnapshotPictures {
    /// The snapshot's table of pictures; absent from a snapshot of records only.
    static let table = "pictures"

    /// Pictures read between two progress reports (each may be megabytes).
    static let stride = 64

    /// Makes `snapshot`'s `pictures` table (inside the caller's transaction) and copies into it
    /// every picture of the tier under `root` (`images/` in the data directory) that verifies:
    /// their totals. `progress` is told the pictures read and the pictures in all. No tier (no
    /// index file) is no pictures. Blocking file I/O.
    static func copy(from root: String, into snapshot: SQLiteConnection, progress: (Int, Int) -> Void) throws
        -> SnapshotManifest.Pictures
    {
        try snapshot.execute(
            "CREATE TABLE \(table) (key TEXT PRIMARY KEY NOT NULL, used_at INTEGER NOT NULL, record BLOB NOT NULL)")
        var rows = CacheSnapshot.Rows()
        let path = root + "/" + CacheDatabase.images.fileName
        guard FileManager.default.fileExists(atPath: path) else { return rows.pictures }
        let index = try SQLiteConnection(path: path, create: false, readOnly: true)
        try CacheDatabase.configure(index)
        guard try index.integer("PRAGMA application_id") == CacheDatabase.images.applicationID else {
            throw SnapshotError.noCache("\(path) is not a TheMet picture index")
        }
        // One read transaction: the count and the rows are of the same moment.
        try index.execute("BEGIN")
        defer { try? index.execute("COMMIT") }
        let total = Int(try index.integer("SELECT count(*) FROM images"))
        let select = try index.prepare("SELECT key, used_at, bytes, file, record FROM images")
        try select.bind()
        let insert = try snapshot.prepare("INSERT INTO \(table) (key, used_at, record) VALUES (?1, ?2, ?3)")
        var read = 0
        while try select.step() {
            read += 1
            let key = select.text(at: 0)
            let record = picture(
                key, record: select.blob(at: 4), file: root + "/files/" + select.text(at: 3),
                length: Int(select.integer(at: 2)))
            if let record, record.withUnsafeBytes({ rows.add($0, key: key) }) {
                try insert.bind(.text(key), .integer(select.integer(at: 1)), .blob(record))
                _ = try insert.step()
            }
            if read % stride == 0 { progress(read, total) }
        }
        progress(read, total)
        return rows.pictures
    }

    /// The snapshot's record of `key`'s picture: the index's `record` (the entry without its
    /// bytes) with the bytes of `file` put back, when the file is `length` bytes long and holds
    /// the bytes the entry was stored with (its strong ETag); nil otherwise. A remembered 404
    /// has no file.
    private static func picture(_ key: String, record: [UInt8], file: String, length: Int) -> [UInt8]? {
        guard let stored = CacheEntry.restored(record: record, key: key) else { return nil }
        guard stored.status == 200 else { return stored.record }
        guard let (bytes, _) = ImageFileTier.read(file, length: length), ETag.strong(for: bytes) == stored.etag else {
            return nil
        }
        return stored.withBody(bytes).record
    }
}
