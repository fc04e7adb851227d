import MetEngine

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
