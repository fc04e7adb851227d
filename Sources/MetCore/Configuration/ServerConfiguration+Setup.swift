import Foundation
import MetEngine

extension ServerConfiguration {
    /// Creates the data directory (and its parents) if missing and checks it is writable.
    /// Throws a `ConfigurationError` for `--data-dir` otherwise.
    public func prepareDataDirectory() throws(ConfigurationError) {
        let manager = FileManager.default
        do {
            try manager.createDirectory(atPath: cache.dataDirectory, withIntermediateDirectories: true)
        } catch {
            throw ConfigurationError(
                flag: "--data-dir", reason: "cannot create '\(cache.dataDirectory)': \(error.localizedDescription)")
        }
        guard manager.isWritableFile(atPath: cache.dataDirectory) else {
            throw ConfigurationError(flag: "--data-dir", reason: "'\(cache.dataDirectory)' is not writable")
        }
    }
}

extension ServerConfiguration {
    /// The group's secret: `--redis-secret`, or the contents of `--redis-secret-file` (one trailing
    /// newline dropped), checked as the flag's value is; nil when neither is given. Throws a
    /// `ConfigurationError` naming the flag when both are given or the file cannot be read or used.
    public func groupSecret() throws(ConfigurationError) -> String? {
        guard let path = redis.secretFile else { return redis.secret }
        guard redis.secret == nil else {
            throw ConfigurationError(flag: "--redis-secret-file", reason: "give --redis-secret or this flag, not both")
        }
        guard let data = FileManager.default.contents(atPath: path), var text = String(data: data, encoding: .utf8)
        else {
            throw ConfigurationError(flag: "--redis-secret-file", reason: "cannot read '\(path)'")
        }
        if text.hasSuffix("\n") { text.removeLast() }
        if let reason = Self.secretProblem(text) {
            throw ConfigurationError(flag: "--redis-secret-file", reason: "'\(path)': \(reason)")
        }
        return text
    }

    /// The largest record the instances of a group store in Redis and read back, in bytes: a
    /// record holds the body (at most `upstream.maxBody`), its gzip copy (no larger, for bodies
    /// worth compressing) and what was read from it; 2 × `upstream.maxBody` + 1 MiB holds the
    /// largest the Met sends (the whole object list, about 10 MB as a record) with room to spare.
    /// A larger record stays with the instance that fetched it; a larger reply drops the link.
    public var sharedRecordLimit: Int { 2 * upstream.maxBody + 1_048_576 }

    /// Where pictures come from: `--image-upstream`; without it, the Met's image host when
    /// `--upstream` is the Met's own API, else `--upstream`'s origin or directory (a fixture
    /// directory, `met-fixture-server` and a mirror of both hosts serve the image host's paths
    /// too), so that nothing pointed at a stand-in for the Met reaches the real image host.
    public var imageLocation: UpstreamLocation {
        if let given = images.location { return given }
        return upstream.location == UpstreamSettings().location ? .origin(Self.metImageHost) : upstream.location
    }

    /// The Met's image host, where records' picture URLs point.
    public static let metImageHost = "https://images.metmuseum.org"
}
