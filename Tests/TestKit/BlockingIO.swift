import Foundation
import MetEngine

/// Blocking calls for test clients and servers, kept off Swift's cooperative pool, where the
/// server's own tasks run (a blocked pool thread could hold up the very answer a test waits for).
public enum BlockingIO {
    /// Runs `body` on a thread of its own and returns its result.
    public static func onThread<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
        await awaitDelivery { deliver in Thread { deliver(body()) }.start() }
    }

    /// Sends all of `bytes` on the blocking socket `descriptor` (a closed peer gives an error, not
    /// SIGPIPE). Returns nil when all were sent, else the errno of the send that failed (0 when
    /// the socket took no byte without an error).
    @discardableResult
    public static func sendAll(_ bytes: [UInt8], to descriptor: CInt) -> CInt? {
        var sent = 0
        while sent < bytes.count {
            let written = bytes.withUnsafeBytes {
                Glibc.send(descriptor, $0.baseAddress! + sent, bytes.count - sent, Int32(MSG_NOSIGNAL))
            }
            guard written > 0 else { return written < 0 ? errno : 0 }
            sent += written
        }
        return nil
    }
}
