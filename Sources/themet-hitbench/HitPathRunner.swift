import Foundation
import HTTPWire
import MetCore
import MetEngine
import MetHTTP

/// Warms and times the cases of `HitCase` against one service: each request taken as an HTTP loop
/// takes it (`HTTPLoop.handle` and `HTTPConnection.send`), minus the socket and the access log.
struct HitPathRunner: Sendable {
    struct NotAtOnce: Error, CustomStringConvertible {
        let target: String
        var description: String { "\(target) was not answered at once (from memory, or from the disk on the loop)" }
    }

    let service: MetService
    private let peer = RequestPeer(address: IPAddress("127.0.0.1")!)

    init(service: MetService) {
        self.service = service
    }

    /// Asks for each target of `hitCase` until it is answered at once with the case's status (and
    /// `warmBody`), at most 500 times (a search page's objects are fetched in the background: 20 ms
    /// between asks while any is pending); returns what went wrong, if anything did.
    func warm(_ hitCase: HitCase) async -> String? {
        for target in hitCase.targets {
            var answered = false
            for _ in 0..<500 where !answered {
                let request = Request(method: "GET", target: target, headers: ["Host": "127.0.0.1"], peer: peer)
                switch service.respond(to: request) {
                case .ready(let response):
                    guard response.status == hitCase.status else {
                        return "\(target) answered \(response.status), not \(hitCase.status)"
                    }
                    answered = hitCase.warmBody.map { Self.contains(response.body, Array($0.utf8)) } ?? true
                    if !answered { try? await Task.sleep(for: .milliseconds(20)) }
                case .suspended(let rest):
                    _ = await rest.response()
                }
            }
            if !answered { return "\(target) was not answered at once after 500 asks" }
        }
        // The disk case's rows read from SQLite, not from the writer's queue.
        while let disk = service.engine.disk, disk.statistics.queued > 0 {
            try? await Task.sleep(for: .milliseconds(20))
        }
        return nil
    }

    private static func contains(_ bytes: [UInt8], _ part: [UInt8]) -> Bool {
        guard bytes.count >= part.count else { return false }
        return (0...(bytes.count - part.count)).contains { bytes[$0..<($0 + part.count)].elementsEqual(part) }
    }

    /// The thread CPU time, in nanoseconds, of each of `requests` requests of `hitCase`, every one
    /// answered at once, as a loop answers a hit (throws `NotAtOnce` if one is not).
    func time(_ hitCase: HitCase, requests: Int) throws -> Double {
        let heads = hitCase.targets.map { Array("GET \($0) HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".utf8) }
        var wire = WireEncoder()
        var ids = RequestIDs()
        var written = 0
        var second = Int(Date().timeIntervalSince1970)
        let start = Self.threadCPUNanoseconds()
        for index in 0..<requests {
            // A loop reads the clock once per iteration of its own; here once per 1,024 requests.
            if index & 1_023 == 0 { second = Int(Date().timeIntervalSince1970) }
            let started = DispatchTime.now().uptimeNanoseconds
            let bytes = heads[index % heads.count]
            let head = try bytes.withUnsafeBytes { try RequestHead(parsing: $0) }
            let id = ids.next()
            guard case .ready(let response) = service.respond(to: head.request(body: [], peer: peer, requestID: id))
            else { throw NotAtOnce(target: hitCase.targets[index % heads.count]) }
            guard response.status == hitCase.status else { throw NotAtOnce(target: head.target) }
            let sent = wire.encode(response, isHead: false, minorVersion: 1, close: false, requestID: id, at: second)
            written &+= sent.head.count &+ sent.body.count
            service.finished(response, seconds: Double(DispatchTime.now().uptimeNanoseconds &- started) / 1e9)
        }
        let elapsed = Self.threadCPUNanoseconds() - start
        precondition(written > 0)  // Keeps the encoding from being optimized away.
        return Double(elapsed) / Double(requests)
    }

    private static func threadCPUNanoseconds() -> Int {
        var now = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now)
        return now.tv_sec * 1_000_000_000 + now.tv_nsec
    }
}
