/// A cache entry as bytes, for the tiers that keep entries outside this process's memory (the
/// SQLite tier; later the shared one): everything the entry holds, so restoring one decodes no
/// JSON and compresses nothing, followed by a checksum of all of it.
///
/// Layout (little-endian; see `ByteWriter`): format version (1 byte), key, kind, status, stored-at,
/// fresh-until, stale-until, revalidate-until, ETag, gzip ETag?, message?, body, gzip copy?,
/// details, then the checksum (8 bytes) of everything before it: `Checksum.of` in version 2,
/// `Checksum.version1` in version 1, which differs in nothing else.
extension CacheEntry {
    /// The format this build writes. It reads this one and version 1 (rows and Redis values
    /// written before, kept across an upgrade); a record of any other version is refused (a miss).
    package static let recordVersion: UInt8 = 2

    /// The entry's record (see the extension's comment). Copies the bodies: call off loop threads.
    public var record: [UInt8] {
        var writer = ByteWriter(capacity: body.count + (gzipped?.count ?? 0) + key.utf8.count + details.cost + 128)
        writer.byte(Self.recordVersion)
        writer.string(key)
        writer.string(kind.rawValue)
        writer.length(status)
        writer.double(storedAt)
        writer.double(freshUntil)
        writer.double(staleUntil)
        writer.double(revalidateUntil)
        writer.string(etag)
        writer.optional(gzippedETag) { $0.string($1) }
        writer.optional(message) { $0.string($1) }
        writer.blob(body)
        writer.optional(gzipped) { $0.blob($1) }
        details.write(to: &writer)
        var bytes = writer.bytes
        let checksum = bytes.withUnsafeBytes { Checksum.of($0) }
        withUnsafeBytes(of: checksum.littleEndian) { bytes.append(contentsOf: $0) }
        return bytes
    }

    /// The entry `record` holds, if it is whole, of this build's format, for `key`, its checksum
    /// matches, and an object record's own `objectID` is the one its key names; nil otherwise
    /// (torn, truncated, damaged, another key's, or one object's record stored under another's
    /// key with its checksum made anew).
    public static func restored(record: [UInt8], key: String) -> CacheEntry? {
        record.withUnsafeBytes { restored(record: $0, key: key) }
    }

    /// The same, read where the record lies (an SQLite row's blob, valid until its statement
    /// steps on), without a copy of the whole record first. The key is compared byte by byte and
    /// `key` itself kept, and the gzip copy's ETag, which follows from the ETag, is checked where
    /// it lies: neither is made into a string.
    public static func restored(record: UnsafeRawBufferPointer, key: String) -> CacheEntry? {
        guard record.count > 8, let version = record.first, version == 1 || version == recordVersion else {
            return nil
        }
        let covered = UnsafeRawBufferPointer(rebasing: record[..<(record.count - 8)])
        let computed = version == 1 ? Checksum.version1(covered) : Checksum.of(covered)
        var sum = ByteReader(record, from: record.count - 8)
        guard let stored = sum.integer(), UInt64(bitPattern: stored) == computed else { return nil }
        var reader = ByteReader(record, from: 1, to: record.count - 8)
        guard reader.string(where: { $0.holds(key.utf8) }),
            let kind = reader.string().flatMap(ResourceKind.init(rawValue:)), let status = reader.length(),
            let storedAt = reader.double(), let freshUntil = reader.double(), let staleUntil = reader.double(),
            let revalidateUntil = reader.double(), let etag = reader.string(),
            let gzippedETag = reader.optional({ reader in
                reader.string(where: { isGzippedETag($0, of: etag) }) ? () : nil
            }),
            let message = reader.optional({ $0.string() }),
            let body = reader.blob(), let gzipped = reader.optional({ $0.blob() }),
            let details = EntryDetails.read(from: &reader), reader.isAtEnd,
            (gzippedETag != nil) == (gzipped != nil),
            // A forged record's NaN or infinity would never expire, or be stored as SQL NULL.
            [storedAt, freshUntil, staleUntil, revalidateUntil].allSatisfy(\.isFinite)
        else { return nil }
        if case .object(let summary) = details {
            guard kind == .object, MetResource.isObjectKey(key, id: summary.objectID) else { return nil }
        }
        return CacheEntry(
            key: key, kind: kind, status: status, body: body, etag: etag, gzipped: gzipped, message: message,
            details: details, storedAt: storedAt, freshUntil: freshUntil, staleUntil: staleUntil,
            revalidateUntil: revalidateUntil)
    }
}

extension EntryDetails {
    /// Appends the details: a tag (0 none, 1 object summary, 2 ID list, 3 picture), then its
    /// members.
    fileprivate func write(to writer: inout ByteWriter) {
        switch self {
        case .none:
            writer.byte(0)
        case .object(let summary):
            writer.byte(1)
            writer.integer(Int64(summary.objectID))
            for text in summary.texts { writer.optional(text) { $0.string($1) } }
            writer.optional(summary.objectBeginDate) { $0.integer(Int64($1)) }
            writer.optional(summary.objectEndDate) { $0.integer(Int64($1)) }
            writer.optional(summary.isPublicDomain) { $0.byte($1 ? 1 : 0) }
        case .ids(let list):
            writer.byte(2)
            writer.integer(Int64(list.total))
            writer.length(list.ids.count)
            for id in list.ids { writer.integer(Int64(id)) }
        case .image(let image):
            writer.byte(3)
            writer.string(image.contentType)
            writer.length(image.width)
            writer.length(image.height)
            writer.optional(image.upstream.etag) { $0.string($1) }
            writer.optional(image.upstream.lastModified) { $0.string($1) }
        }
    }

    /// The details `write(to:)` wrote, or nil when the bytes are damaged.
    fileprivate static func read(from reader: inout ByteReader) -> EntryDetails? {
        switch reader.byte() {
        case 0:
            return EntryDetails.none
        case 1:
            guard let objectID = reader.integer() else { return nil }
            var summary = ObjectSummary(objectID: Int(objectID))
            // Straight into the summary's members, in `texts`' order: no array made and grown.
            var damaged = false
            func text() -> String? {
                guard let text = reader.optional({ $0.string() }) else {
                    damaged = true
                    return nil
                }
                return text
            }
            (summary.title, summary.artistDisplayName, summary.objectDate, summary.medium) = (
                text(), text(), text(), text()
            )
            (summary.creditLine, summary.primaryImage, summary.primaryImageSmall, summary.objectURL) = (
                text(), text(), text(), text()
            )
            guard !damaged, let begin = reader.optional({ $0.integer() }), let end = reader.optional({ $0.integer() }),
                let publicDomain = reader.optional({ $0.byte() })
            else { return nil }
            summary.objectBeginDate = begin.map { Int($0) }
            summary.objectEndDate = end.map { Int($0) }
            summary.isPublicDomain = publicDomain.map { $0 != 0 }
            return .object(summary)
        case 2:
            guard let total = reader.integer(), let count = reader.length() else { return nil }
            var ids: [Int] = []
            ids.reserveCapacity(min(count, 1 << 20))
            for _ in 0..<count {
                guard let id = reader.integer() else { return nil }
                ids.append(Int(id))
            }
            return .ids(IDList(total: Int(total), ids: ids))
        case 3:
            guard let contentType = reader.string(), let width = reader.length(), let height = reader.length(),
                let etag = reader.optional({ $0.string() }), let lastModified = reader.optional({ $0.string() })
            else { return nil }
            return .image(
                ImageDetails(
                    contentType: contentType, width: width, height: height,
                    upstream: UpstreamValidators(etag: etag, lastModified: lastModified)))
        default:
            return nil
        }
    }
}

extension ObjectSummary {
    /// The optional strings, in one fixed order, for the record (`EntryDetails.read` reads them
    /// back in this order).
    fileprivate var texts: [String?] {
        [title, artistDisplayName, objectDate, medium, creditLine, primaryImage, primaryImageSmall, objectURL]
    }
}
