import EventLoops
import MetEngine

/// One loop's access lines not yet handed to the `AccessLog`: written when the buffer fills,
/// within `flushSeconds` otherwise, and when the loop closes. Loop thread only.
final class AccessLogBuffer {
    /// Most bytes of access lines held before they are handed over.
    static let capacityBytes = 32_768
    /// How long a line waits at most before it is written.
    static let flushSeconds = 0.2

    private let log: AccessLog
    private let loop: EventLoop
    private var line: AccessLine
    private var buffer: [UInt8] = []
    private var flushScheduled = false

    init(log: AccessLog, loop: EventLoop) {
        self.log = log
        self.loop = loop
        line = AccessLine(format: log.format)
    }

    /// Adds one line.
    func record(_ record: AccessRecord) {
        line.append(record, to: &buffer)
        if buffer.count >= Self.capacityBytes {
            flush()
        } else if !flushScheduled {
            flushScheduled = true
            // Weakly: a timer still pending when the loop stops must not keep the loop's base.
            loop.schedule(after: Self.flushSeconds) { [weak self] in
                self?.flushScheduled = false
                self?.flush()
            }
        }
    }

    /// Hands the lines held to the log.
    func flush() {
        guard !buffer.isEmpty else { return }
        log.write(buffer)
        buffer.removeAll(keepingCapacity: true)
    }
}
