import MetEngine

/// The order of `/search` results.
public enum SearchSort: String, Sendable, CaseIterable {
    /// The Met's order (its relevance ranking).
    case relevance
    /// By object ID, ascending; applied to the whole ID list before paging, so pages are stable.
    case id
    /// By object ID, descending; applied to the whole ID list before paging.
    case idDescending = "-id"
    /// By title (case-insensitive), within the page.
    case title
    /// By title, descending, within the page.
    case titleDescending = "-title"
    /// By `objectBeginDate` (then `objectEndDate`), within the page.
    case date
    /// By date, descending, within the page.
    case dateDescending = "-date"

    /// Whether the sort reorders the whole ID list (and so needs all of it) rather than one page.
    var sortsWholeList: Bool { self == .id || self == .idDescending }
}
