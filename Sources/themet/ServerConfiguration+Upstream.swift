import MetCore
import MetEngine
import MetFixtures
import MetUpstream

extension ServerConfiguration {
    /// The upstream this configuration names: libcurl for an origin, the fixture archive for a
    /// directory. Throws a `ConfigurationError` for `--upstream` when either cannot be used.
    func makeUpstream() throws(ConfigurationError) -> any Upstream {
        switch upstream.location {
        case .origin(let origin):
            do {
                return try CurlUpstream(
                    origin: origin, connectTimeout: upstream.connectTimeout, timeout: upstream.timeout,
                    maxBodyBytes: upstream.maxBody)
            } catch {
                throw ConfigurationError(flag: "--upstream", reason: "cannot start the HTTP client: \(error)")
            }
        case .directory(let path):
            do {
                return try FixtureDirectoryUpstream(directory: path)
            } catch {
                throw ConfigurationError(
                    flag: "--upstream", reason: "cannot use '\(path)' as a fixture directory: \(error)")
            }
        }
    }
}
