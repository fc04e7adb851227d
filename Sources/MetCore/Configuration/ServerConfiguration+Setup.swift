import Foundation

extension ServerConfiguration {
    /// The upstream this configuration names: URLSession for an origin, the fixture archive for a
    /// directory. Throws a `ConfigurationError` for `--upstream` when the directory is unusable.
    public func makeUpstream() throws(ConfigurationError) -> any Upstream {
        switch upstream {
        case .origin(let origin):
            // One connection per pacer slot: every call goes through the pacer, so no more are needed.
            return URLSessionUpstream(origin: origin, timeout: upstreamTimeout, maxConnections: upstreamConcurrency)
        case .directory(let path):
            do {
                return try FixtureDirectoryUpstream(directory: path)
            } catch {
                throw ConfigurationError(
                    flag: "--upstream", reason: "cannot use '\(path)' as a fixture directory: \(error)")
            }
        }
    }

    /// Creates the data directory (and its parents) if missing and checks it is writable.
    /// Throws a `ConfigurationError` for `--data-dir` otherwise.
    public func prepareDataDirectory() throws(ConfigurationError) {
        let manager = FileManager.default
        do {
            try manager.createDirectory(atPath: dataDirectory, withIntermediateDirectories: true)
        } catch {
            throw ConfigurationError(
                flag: "--data-dir", reason: "cannot create '\(dataDirectory)': \(error.localizedDescription)")
        }
        guard manager.isWritableFile(atPath: dataDirectory) else {
            throw ConfigurationError(flag: "--data-dir", reason: "'\(dataDirectory)' is not writable")
        }
    }
}
