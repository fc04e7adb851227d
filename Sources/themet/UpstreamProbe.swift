import Foundation
import MetCore
import MetEngine

/// At start-up, whether the Met answers, so that a server started without internet says so at
/// once rather than through each request's 502: one `GET /departments` through the core (the
/// cache and the pacer, as any request), in the background. Not for a fixture directory, nor for
/// an upstream on this machine (a test double or a local proxy: its own start-up is its check).
enum UpstreamProbe {
    /// Whether a server on `upstream` checks it at start-up.
    static func applies(to upstream: UpstreamLocation) -> Bool {
        guard case .origin(let origin) = upstream, let host = URL(string: origin)?.host else { return false }
        let bare = host.trimmingCharacters(in: CharacterSet(charactersIn: "[]")).lowercased()
        return !(bare == "localhost" || bare == "::1" || bare.hasPrefix("127."))
    }

    /// Asks, and logs what it learned: an info line when the Met answered (or the cache held the
    /// list, so the Met was not asked), a warning with the reason and what to do when it did not.
    static func run(_ service: MetService, origin: String, logger: Logger) async {
        let started = Date()
        let response = await service.response(to: .get("/departments"))
        let milliseconds = Int(Date().timeIntervalSince(started) * 1_000)
        switch (response.status, response.cacheOutcome) {
        case (200, .miss), (200, .collapsed):
            logger.info("upstream: \(origin) answers (the department list in \(milliseconds) ms)")
        case (200, .stale):
            logger.warning(
                "upstream: \(origin) does not answer (the department list was served stale). Requests that need "
                    + "the Met fail until it does, unless the cache can stand in. Offline? `make demo` (themet serve "
                    + "--upstream Fixtures) serves the bundled fixtures.")
        case (200, _):
            logger.info("upstream: \(origin) not asked at start-up: the cache holds the department list")
        default:
            let object = (try? JSONSerialization.jsonObject(with: Data(response.body))) as? [String: Any]
            let detail = object?["detail"] as? String ?? "HTTP \(response.status)"
            logger.warning(
                "upstream: \(origin) does not answer: \(detail) Requests that need the Met fail until it does. "
                    + "Offline? `make demo` (themet serve --upstream Fixtures) serves the bundled fixtures.")
        }
    }
}
