/// The Met's two generations of search.
public enum SearchAPI: String, Sendable, Hashable {
    /// `/public/collection/v1/search`: every matching ID in one answer; being retired (410).
    case v1 = "v1"
    /// `/public/collection/v1.1/search`: paged with `offset` and `limit` (≤ 500), and only the
    /// first 10,000 hits can be paged.
    // swift-format-ignore: AlwaysUseLowerCamelCase
    // The Met's own name, v1.1, with the dot that no identifier can hold.
    case v1_1 = "v1.1"

    /// The upstream path.
    var path: String { "/public/collection/\(rawValue)/search" }

    /// The largest page v1.1 gives.
    static let pageLimit = 500
    /// How many hits v1.1 lets a client page through.
    static let window = 10_000
}

/// Which search generation the server uses: `--search-api`.
public enum SearchAPIMode: String, Sendable, Hashable, CaseIterable {
    /// v1.1, falling back to v1 when v1.1 is absent (404), and back to v1.1 when v1 is retired (410).
    case auto
    /// Always v1.
    case v1 = "v1"
    /// Always v1.1.
    // swift-format-ignore: AlwaysUseLowerCamelCase
    // The Met's own name, v1.1, with the dot that no identifier can hold.
    case v1_1 = "v1.1"
}
