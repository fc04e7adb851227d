import MetCore
import MetEngine
import MetFixtures
import MetUpstream

extension ServerConfiguration {
    /// The upstream this configuration names: libcurl for an origin, the fixture archive for a
    /// directory. Throws a `ConfigurationError` for `--upstream` when either cannot be used.
    func makeUpstream() throws(ConfigurationError) -> any Upstream {
        try Self.upstream(
            at: upstream.location, flag: "--upstream", maxBodyBytes: upstream.maxBody, accept: "application/json",
            settings: upstream)
    }

    /// The image host this configuration names (`--image-upstream`); nil when the records' upstream
    /// serves the pictures too (a fixture directory, without `--image-upstream`).
    func makeImageUpstream() throws(ConfigurationError) -> (any Upstream)? {
        let location: UpstreamLocation
        switch (images.location, upstream.location) {
        case (let given?, _): location = given
        case (nil, .directory): return nil
        case (nil, .origin): location = .origin(Self.imageHost)
        }
        return try Self.upstream(
            at: location, flag: "--image-upstream", maxBodyBytes: images.maxBytes, accept: "image/*", settings: upstream
        )
    }

    /// The Met's image host, where records' picture URLs point.
    static let imageHost = "https://images.metmuseum.org"

    private static func upstream(
        at location: UpstreamLocation, flag: String, maxBodyBytes: Int, accept: String, settings: UpstreamSettings
    ) throws(ConfigurationError) -> any Upstream {
        switch location {
        case .origin(let origin):
            do {
                return try CurlUpstream(
                    origin: origin, connectTimeout: settings.connectTimeout, timeout: settings.timeout,
                    maxBodyBytes: maxBodyBytes, accept: accept)
            } catch {
                throw ConfigurationError(flag: flag, reason: "cannot start the HTTP client: \(error)")
            }
        case .directory(let path):
            do {
                return try FixtureDirectoryUpstream(directory: path)
            } catch {
                throw ConfigurationError(flag: flag, reason: "cannot use '\(path)' as a fixture directory: \(error)")
            }
        }
    }
}
