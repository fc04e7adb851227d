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
            settings: upstream, connections: upstream.concurrency)
    }

    /// The image host this configuration names (`imageLocation`); nil when it is the records'
    /// fixture directory, whose upstream then serves the pictures too.
    func makeImageUpstream() throws(ConfigurationError) -> (any Upstream)? {
        if case .directory = imageLocation, imageLocation == upstream.location { return nil }
        return try Self.upstream(
            at: imageLocation, flag: "--image-upstream", maxBodyBytes: images.maxBytes, accept: "image/*",
            settings: upstream, connections: images.concurrency)
    }

    private static func upstream(
        at location: UpstreamLocation, flag: String, maxBodyBytes: Int, accept: String, settings: UpstreamSettings,
        connections: Int
    ) throws(ConfigurationError) -> any Upstream {
        switch location {
        case .origin(let origin):
            do {
                return try CurlUpstream(
                    origin: origin, connectTimeout: settings.connectTimeout, timeout: settings.timeout,
                    maxBodyBytes: maxBodyBytes, accept: accept, connections: connections)
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
