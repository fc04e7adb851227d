import CVips
import Synchronization

/// libvips, started once per process. Every `Picture` operation starts it first; after that,
/// libvips is safe from any thread (each operation builds its own pipeline).
public enum Vips {
    private static let started = Mutex<Bool?>(nil)

    /// Starts libvips the first time (`vips_init`); later calls return at once. False when it
    /// could not start.
    static func start() -> Bool {
        started.withLock { state in
            if let state { return state }
            let ok = vips_init("themet") == 0
            if ok {
                // A decode never reads past what the file holds, and operations never cache
                // whole results: the image tier keeps what should be kept.
                vips_cache_set_max(0)
                // Blocks of half a mebibyte and more (pixel strips, decoded pictures) are mapped
                // and go back to the kernel when freed, instead of leaving their pages in malloc's
                // arenas: after the bench's picture steps, 19 MiB less RSS (60,000 records cached).
                _ = cvips_map_blocks_from(512 * 1_024)
            }
            state = ok
            return ok
        }
    }

    /// Sets how many threads libvips's operations use (its default: one per core). A process that
    /// makes pictures beside other work, such as the fake image host beside the tests, takes one.
    public static func limitThreads(to count: Int) {
        guard start() else { return }
        vips_concurrency_set(CInt(count))
    }

    /// libvips's message about the latest failure on this thread, cleared once read.
    static func lastError(_ operation: String) -> VipsError {
        let text = String(String(cString: vips_error_buffer()).reversed().drop(while: \.isNewline).reversed())
        vips_error_clear()
        return VipsError(operation: operation, message: text)
    }
}

/// A libvips operation that failed, with libvips's own words.
public struct VipsError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The operation, as libvips names it (`jpegsave_buffer`).
    public let operation: String
    public let message: String

    public init(operation: String, message: String) {
        self.operation = operation
        self.message = message
    }

    public var description: String { "vips \(operation): \(message.isEmpty ? "failed" : message)" }
}
