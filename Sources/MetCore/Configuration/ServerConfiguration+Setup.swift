import Foundation

extension ServerConfiguration {
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
