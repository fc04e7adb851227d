import Foundation
import TestKit

/// Bytes over a plain TCP socket, for what a polite client library will not send: oversized
/// requests, and clients that hang up early. Runs on its own thread so blocking calls never
/// stall the cooperative pool.
enum RawHTTP {
    /// What came back on one connection.
    struct Exchange: Sendable {
        /// Every byte the server sent.
        var bytes: [UInt8]
        /// Whether the server closed the connection (rather than the read timing out).
        var closedByServer: Bool

        var text: String { String(decoding: bytes, as: UTF8.self) }

        /// The body of the one response these bytes hold, framed by `Content-Length`. Throws
        /// when there is no end of head, or the length is missing or differs from the body's.
        func body() throws -> [UInt8] {
            let separator = Array("\r\n\r\n".utf8)
            guard let end = bytes.indices.first(where: { bytes[$0...].starts(with: separator) }) else {
                throw ProcessFailure("no end of head in \(text.prefix(200))")
            }
            let body = Array(bytes[(end + separator.count)...])
            let fields = String(decoding: bytes[..<end], as: UTF8.self).components(separatedBy: "\r\n").dropFirst()
            let length = fields.first { $0.lowercased().hasPrefix("content-length:") }?
                .dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)
            guard length == String(body.count) else {
                throw ProcessFailure("Content-Length \(length ?? "missing") for a body of \(body.count) bytes")
            }
            return body
        }
    }

    /// Connects to 127.0.0.1:`port`, sends `request`, then either reads until the server closes
    /// (or `readTimeout` passes) and returns what came back, or — with `hangUpAfter` — closes the
    /// connection after that many seconds without reading; `reset` makes that close an RST
    /// (`SO_LINGER` 0) instead of a FIN.
    static func exchange(
        port: Int, request: [UInt8], hangUpAfter: Double? = nil, reset: Bool = false, readTimeout: Double = 10
    ) async throws -> Exchange {
        try await BlockingIO.onThread {
            Result {
                try run(port: port, request: request, hangUpAfter: hangUpAfter, reset: reset, readTimeout: readTimeout)
            }
        }.get()
    }

    private static func run(
        port: Int, request: [UInt8], hangUpAfter: Double?, reset: Bool, readTimeout: Double
    ) throws -> Exchange {
        let fd = try RawConnection.connect(port: port, readTimeout: readTimeout)
        defer { close(fd) }
        // The server may close early on an oversized request: what it read is answered.
        BlockingIO.sendAll(request, to: fd)
        if let hangUpAfter {
            Thread.sleep(forTimeInterval: hangUpAfter)
            if reset {
                var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
                setsockopt(fd, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
            }
            return Exchange(bytes: [], closedByServer: false)
        }
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count == 0 { return Exchange(bytes: received, closedByServer: true) }
            if count < 0 { return Exchange(bytes: received, closedByServer: errno == ECONNRESET) }
            received.append(contentsOf: buffer[0..<count])
        }
    }
}
