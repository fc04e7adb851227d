import MetEngine

/// Which generation of the Met's search new searches ask (`--search-api`): fixed to v1 or v1.1, or
/// in `auto` mode the one that last answered, moved when the other answers 404 (v1.1 absent) or 410
/// (v1 retired). One instance serves every request; thread-safe.
final class SearchGenerations: Sendable {
    private let mode: SearchAPIMode
    /// The generation `auto` currently uses.
    private let generation: Locked<SearchAPI>
    private let logger: Logger

    init(mode: SearchAPIMode, logger: Logger) {
        self.mode = mode
        generation = Locked(mode == .v1 ? .v1 : .v1_1)
        self.logger = logger
    }

    /// The generation a new search starts with.
    var current: SearchAPI { generation.withLock { $0 } }

    /// In `auto` mode, the other generation to try after `error` on `api`: v1 when v1.1 is absent
    /// (404), v1.1 when v1 is retired (410). Remembers the switch for later searches (logged once
    /// per switch).
    func switched(from api: SearchAPI, after error: UpstreamError) -> SearchAPI? {
        guard mode == .auto else { return nil }
        let other: SearchAPI
        switch (api, error) {
        case (.v1_1, .status(404)): other = .v1
        case (.v1, .status(410)): other = .v1_1
        default: return nil
        }
        generation.withLock { $0 = other }
        logger.warning("search: \(api.path) answered \(error.logDescription); using \(other.path) from now on")
        return other
    }
}
