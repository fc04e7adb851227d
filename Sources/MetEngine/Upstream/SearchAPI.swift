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
    package var path: String { "/public/collection/\(rawValue)/search" }

    /// The largest page v1.1 gives.
    package static let pageLimit = 500
    /// How many hits v1.1 lets a client page through.
    package static let window = 10_000
}
