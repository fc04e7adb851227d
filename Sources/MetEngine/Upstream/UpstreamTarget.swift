/// The one way an upstream request target is written: the exact bytes sent to the Met after its
/// origin, and, because the same function writes both, the cache key of what it returns. Two
/// requests share a cache entry only if they send the same bytes upstream, so no value can pose
/// as another query (a `%26` in a value stays `%26` in the key; it can no longer read as `&`).
public enum UpstreamTarget {
    /// `path`, then (when there are items) `?` and `name=value` pairs joined by `&`, in the
    /// order given, as `PercentEncoding.target(path:query:keeping:)` writes them: names and
    /// values keep only unreserved characters and `|` (the Met's term separator) as they are; the
    /// path keeps its `/` too. Total: any strings give a valid origin-form target of visible ASCII.
    public static func encode(path: String, query: [RequestTarget.QueryItem]) -> String {
        PercentEncoding.target(path: path, query: query, keeping: .pipe)
    }
}
