import EventLoops
import Foundation
import MetEngine
import MetRedis
import Testing

/// The Redis tier's links on the HTTP loops (`RedisTier.attach(to:)`), against a real Redis: a
/// lookup made on a loop is sent, answered and restored on that loop's thread, with no thread
/// between (one round trip), once the loop's own link is ready.
@Suite("The Redis tier's links on the loops")
struct RedisLoopLinkTests {
    @Test func aLookupMadeOnALoopIsAnsweredOnThatLoopsThread() async throws {
        let redis = try await RedisServer.shared()
        let address = try #require(RedisAddress(redis.url))
        let tier = try RedisTier(
            address: address, prefix: "loop-link-\(UUID()):", timeout: 1, downNotice: "", secret: "secret",
            recordLimit: 1 << 20, time: SystemTime(), logger: Logger(level: .error, sink: { _ in }))
        let loop = try EventLoop(name: "test-http-loop")
        loop.start()
        defer { loop.execute { loop.stop() } }
        // Bounded in count and time: 5 s at most.
        for _ in 0..<100 where !tier.status.connected { try await Task.sleep(for: .milliseconds(50)) }
        let entry = CacheEntry(
            key: "/departments", kind: .departments, status: 200, body: Array(#"{"departments":[]}"#.utf8),
            storedAt: Date().timeIntervalSince1970, policy: FreshnessPolicy())
        tier.store(entry)
        tier.attach(to: [loop])

        // Until the loop's link is ready, its lookups go through the tier's own link, answered on
        // the tier's thread; then on the loop's.
        for _ in 0..<100 {
            let (lookup, onLoop) = await awaitDelivery { deliver in
                loop.execute { tier.entrySoon(for: "/departments") { deliver(($0, loop.isCurrent)) } }
            }
            guard case .found(let read) = lookup else {
                try await Task.sleep(for: .milliseconds(50))
                continue
            }
            #expect(read.record == entry.record)
            if onLoop { return }
            try await Task.sleep(for: .milliseconds(50))
        }
        Issue.record("no lookup was answered on the loop's thread within 5 s")
    }
}
