/// Strong entity tags derived from body bytes, so equal bodies get equal tags across restarts and
/// across instances (unlike `Hasher`, which is seeded per process).
public enum ETag {
    /// `"<FNV-1a 64-bit hash in hex>-<length in hex>"`, quoted. Inlinable, as `FNV1a.hash` is.
    @inlinable
    public static func strong<Bytes: Collection<UInt8>>(for body: Bytes) -> String {
        "\"\(String(FNV1a.hash(body), radix: 16))-\(String(body.count, radix: 16))\""
    }

    /// Whether an `If-None-Match` field value matches `etag` (RFC 9110 §13.1.2: `*`, or any tag in
    /// the list by weak comparison).
    public static func ifNoneMatch(_ fieldValue: String, matches etag: String) -> Bool {
        let opaque = etag.hasPrefix("W/") ? String(etag.dropFirst(2)) : etag
        for candidate in fieldValue.split(separator: ",") {
            var tag = candidate.trimmingSpaces()
            if tag == "*" { return true }
            if tag.hasPrefix("W/") { tag = tag.dropFirst(2) }
            if tag == opaque { return true }
        }
        return false
    }
}

extension Substring {
    /// The substring without leading and trailing spaces and tabs.
    package func trimmingSpaces() -> Substring {
        var result = self
        while let first = result.first, first == " " || first == "\t" { result = result.dropFirst() }
        while let last = result.last, last == " " || last == "\t" { result = result.dropLast() }
        return result
    }
}
