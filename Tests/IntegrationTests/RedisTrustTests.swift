import Foundation
import TestKit
import Testing

@testable import MetCore
@testable import MetEngine

/// The shared tier's faults, each as someone who can write to Redis, or a Redis that stalls, would
/// cause them, through the built binaries: orphaned fill locks, block notices from a clock that
/// runs ahead (or from anyone), records forged with their checksum made anew, and replies larger
/// than any record.
// Serialized: one test stops its Redis, another makes an instance read 64 MiB.
@Suite("A Redis that stalls, lies or floods", .serialized)
struct RedisTrustTests {
    /// A fill lock's lease in seconds, as the README documents it (`Self.lease`).
    static let lease = 3.0

    static func objectKey(_ id: Int) -> String { MetResource.object(id: id).cacheKey }

    /// The lock keys of `group` and their milliseconds to live.
    private static func locks(_ group: InstanceGroup, _ redis: RedisClient) async throws -> [String: Int] {
        guard case .array(let keys) = try await redis.command("KEYS", group.prefix + "lock:*") else { return [:] }
        var locks: [String: Int] = [:]
        for case .bulk(let key?) in keys {
            if case .integer(let left) = try await redis.command([Array("PTTL".utf8), key]) {
                locks[String(decoding: key, as: UTF8.self)] = left
            }
        }
        return locks
    }

    /// Two instances, with a Met that takes 100 ms, under a load of misses on both while Redis is
    /// stopped (SIGSTOP) for a second, three times: calls under way when it stops get no answer in
    /// time, and Redis runs them when it goes on, fill locks included, whose holders have given
    /// up. No lock may then live longer than a lease (3 s; it lived a whole fetch timeout, 31 s,
    /// before), and a request for any key still locked is answered within about a lease.
    @Test func afterRedisStallsNoFillLockOutlivesItsLeaseAndNoRequestWaitsForOne() async throws {
        let redis = try await RedisServer.own()
        let group = try await InstanceGroup.start(
            2, redis: redis, fake: ["--synthetic", "100000", "--latency", "100"], themet: MultiInstanceTests.unpaced)
        let client = try RedisClient(port: redis.port)
        let next = Locked(0)
        let stop = Locked(false)
        let load = Task {
            await withTaskGroup(of: Void.self) { clients in
                for worker in 0..<8 {
                    clients.addTask {
                        // Bounded in count as in time.
                        for _ in 0..<2_000 where !stop.withLock({ $0 }) {
                            let id = next.withLock {
                                $0 += 1
                                return $0
                            }
                            _ = try? await group.get(worker % 2, "/objects/\(id)")
                        }
                    }
                }
            }
        }
        var longest = 0
        var stillLocked: Set<String> = []
        for _ in 0..<3 {
            try await Task.sleep(for: .milliseconds(300))
            redis.pause()
            try await Task.sleep(for: .seconds(1))
            redis.resume()
            try await group.waitUntilConnected()
            // What Redis ran when it went on is there now.
            try await Task.sleep(for: .milliseconds(200))
            let locks = try await Self.locks(group, client)
            longest = max(longest, locks.values.max() ?? 0)
            stillLocked.formUnion(locks.keys)
        }
        stop.withLock { $0 = true }
        await load.value
        #expect(longest <= Int(Self.lease * 1_000), "a lock had \(longest) ms to live")
        // Every key that was locked when Redis went on is answered by the other instance (which
        // did not fetch it) within about a lease: no wait for a holder that gave up.
        for key in stillLocked.prefix(8) {
            guard let id = Int(key.split(separator: "/").last ?? "") else { continue }
            let started = Date()
            #expect(try await group.get(1, "/objects/\(id)").status == 200)
            #expect(Date().timeIntervalSince(started) < Self.lease + 2, "object \(id)")
        }
        // And none is left a lease later.
        try await Task.sleep(for: .seconds(Self.lease))
        #expect(try await Self.locks(group, client).isEmpty)
    }

    /// A Redis hit is answered from the reply on the instance's loop, without a task. A Redis that
    /// stops answering holds such a request no longer than the Redis timeout: the call is given
    /// up (its reply, if Redis ever sends it, is dropped with the connection), the request goes on
    /// in a task, finds the tier unavailable and fetches by itself; and once Redis is back, the
    /// instance answers from its own memory and from the group as before.
    @Test func aRedisThatStopsAnsweringHoldsARequestNoLongerThanItsTimeout() async throws {
        let redis = try await RedisServer.own()
        let group = try await InstanceGroup.start(
            2, redis: redis, fake: ["--synthetic", "1000"],
            themet: MultiInstanceTests.unpaced + ["--redis-timeout", "300ms"])
        for id in [1, 2, 3] { #expect(try await group.get(0, "/objects/\(id)").status == 200) }
        #expect(try await group.get(1, "/objects/1").header("Cache-Status")?.hasSuffix("detail=redis") == true)

        redis.pause()
        let started = Date()
        let alone = try await group.get(1, "/objects/2")
        let waited = Date().timeIntervalSince(started)
        redis.resume()
        #expect(alone.status == 200)
        #expect(alone.header("Cache-Status") == "TheMet; fwd=uri-miss; stored")
        // The timeout, then a fetch: far less than the 60 s a hung call would take.
        #expect(waited < 5, "waited \(waited) s")

        try await group.waitUntilConnected()
        #expect(try await group.get(1, "/objects/2").header("Cache-Status")?.hasPrefix("TheMet; hit") == true)
        #expect(try await group.get(1, "/objects/3").header("Cache-Status")?.hasSuffix("detail=redis") == true)
        let stats = try await group.upstreamStats()
        #expect(stats.paths[MultiInstanceTests.objectPath(2)] == 2)
        #expect(stats.paths[MultiInstanceTests.objectPath(3)] == 1)
    }

    /// A block is told as the seconds it lasts, counted from each receiver's own clock, and no
    /// notice blocks longer than the longest cool-down (15 minutes); the earlier notice, a time on
    /// the sender's clock (two hours ahead here), is not read at all.
    @Test func aBlockNoticeIsADurationCappedAtTheLongestCooldownWhateverSentIt() async throws {
        let group = try await InstanceGroup.start(
            1, redis: try await RedisServer.shared(), fake: ["--synthetic", "100"], themet: MultiInstanceTests.unpaced)
        let client = try RedisClient(port: group.redis.port)
        let channel = group.prefix + "events"
        func blockedFor() async throws -> Double? {
            let upstream = try await group.get(0, "/health").json()["upstream"] as? [String: Any]
            guard let text = upstream?["blockedUntil"] as? String, let until = ISO8601DateFormatter().date(from: text)
            else { return nil }
            return until.timeIntervalSinceNow
        }
        let skewed = Date().timeIntervalSince1970 + 7_200
        _ = try await client.command("PUBLISH", channel, "block\n\(skewed)")
        try await Task.sleep(for: .milliseconds(100))
        #expect(try await blockedFor() == nil)
        #expect(try await group.get(0, "/objects/1").status == 200)

        for seconds in ["7200", "1e12"] {
            _ = try await client.command("PUBLISH", channel, "pause\n\(seconds)")
            var left: Double?
            for _ in 0..<50 where left == nil {
                try await Task.sleep(for: .milliseconds(10))
                left = try await blockedFor()
            }
            let blocked = try #require(left, "pause \(seconds) was not adopted")
            #expect(blocked <= 900 + 1, "blocked for \(blocked) s by 'pause \(seconds)'")
            #expect(try await group.get(0, "/objects/2").status == 503)
        }
    }

    /// Object 100's record, its key rewritten to object 300's and its checksum made anew, stored
    /// under object 300's key: refused (and counted), and object 300 fetched from the Met.
    @Test func aRecordForgedWithARecomputedChecksumIsRefused() async throws {
        let group = try await InstanceGroup.start(
            2, redis: try await RedisServer.shared(), fake: ["--synthetic", "1000"], themet: MultiInstanceTests.unpaced)
        let client = try RedisClient(port: group.redis.port)
        #expect(try await group.get(0, "/objects/100").status == 200)
        let forged = try await Self.forge(100, as: 300, in: group, client)
        _ = try await client.command(
            [Array("SET".utf8), Array((group.prefix + "entry:" + Self.objectKey(300)).utf8), forged])
        let answer = try await group.get(1, "/objects/300")
        #expect(answer.status == 200)
        #expect(try answer.json()["objectID"] as? Int == 300)
        #expect(answer.header("Cache-Status") == "TheMet; fwd=uri-miss; stored")
        let redis = try await group.redisHealth(1)
        // Read twice: before the fill lock is taken, and again once it is.
        #expect((redis["refused"] as? Int ?? 0) >= 1)
        #expect(redis["signed"] as? Bool == false)
    }

    /// With the group's secret, what one instance stored is read by the other, and a record the
    /// secret did not sign is refused: one made by someone without it (even a true record of the
    /// key), and one instance's signed record copied under another key.
    @Test func withTheGroupsSecretOnlySignedRecordsAreRead() async throws {
        let group = try await InstanceGroup.start(
            2, redis: try await RedisServer.shared(), fake: ["--synthetic", "1000"],
            themet: MultiInstanceTests.unpaced + ["--redis-secret", "the-group-secret-0123456789"])
        let client = try RedisClient(port: group.redis.port)
        #expect(try await group.get(0, "/objects/100").status == 200)
        let shared = try await group.get(1, "/objects/100")
        #expect(shared.header("Cache-Status")?.hasSuffix("detail=redis") == true)
        #expect(try await group.redisHealth(1)["signed"] as? Bool == true)

        // Object 100's signed record under object 300's key.
        guard case .bulk(let signed?) = try await client.command("GET", group.prefix + "entry:" + Self.objectKey(100))
        else {
            Issue.record("object 100 is not in Redis")
            return
        }
        _ = try await client.command(
            [Array("SET".utf8), Array((group.prefix + "entry:" + Self.objectKey(300)).utf8), signed])
        // A record of object 200 as the Met sends it, written by someone without the secret.
        let body = try await HTTPClient.request(group.fake.baseURL + "/public/collection/v1/objects/200").body
        let unsigned = CacheEntry(
            key: Self.objectKey(200), kind: .object, status: 200, body: Array(body),
            storedAt: Date().timeIntervalSince1970,
            policy: FreshnessPolicy(), details: EntryDetails.read(Array(body), kind: .object), compress: nil
        ).record
        _ = try await client.command(
            [Array("SET".utf8), Array((group.prefix + "entry:" + Self.objectKey(200)).utf8), unsigned])
        for id in [300, 200] {
            let answer = try await group.get(1, "/objects/\(id)")
            #expect(try answer.json()["objectID"] as? Int == id)
            #expect(answer.header("Cache-Status") == "TheMet; fwd=uri-miss; stored", "object \(id)")
        }
        #expect((try await group.redisHealth(1)["refused"] as? Int ?? 0) >= 2)
    }

    /// A reply of 64 MiB where a record of at most 3 MiB can be (`--upstream-max-body 1MiB`): the
    /// connection is dropped before the reply is read whole, the request answered from the Met,
    /// and the process's memory never grows by anything like the reply.
    @Test func aReplyLargerThanAnyRecordDropsTheLinkAndMemoryStaysBounded() async throws {
        let redis = try await RedisServer.own()
        let group = try await InstanceGroup.start(
            1, redis: redis, fake: ["--synthetic", "100"],
            // A timeout far longer than the reply takes to arrive, even on a busy machine: the bound,
            // not the timeout, must be what drops the link.
            themet: MultiInstanceTests.unpaced + ["--upstream-max-body", "1MiB", "--redis-timeout", "5s"])
        let client = try RedisClient(port: redis.port)
        _ = try await client.command(
            [
                Array("SET".utf8), Array((group.prefix + "entry:" + Self.objectKey(5)).utf8),
                [UInt8](repeating: 0x41, count: 64 << 20),
            ])
        let before = try #require(group.instances[0].peakResidentBytes)
        let answer = try await group.get(0, "/objects/5")
        #expect(answer.status == 200)
        #expect(try answer.json()["objectID"] as? Int == 5)
        let grown = try #require(group.instances[0].peakResidentBytes) - before
        #expect(grown < 24 << 20, "the peak resident set grew by \(grown >> 20) MiB")
        // The health's lastError is cleared once the link is back, which may be before it is read.
        #expect(try await group.redisHealth(0)["disconnects"] as? Int ?? 0 >= 1)
        #expect(group.instances[0].standardError.contains("a reply larger than"))
        _ = try await client.command("DEL", group.prefix + "entry:" + Self.objectKey(5))
        try await group.waitUntilConnected()
    }

    /// `source`'s record as instance 0 stored it, rewritten to claim it is `target`'s, checksum
    /// and all: what a writer of the group's Redis without the secret can make. The instance
    /// writes to Redis after it answers: the record is waited for, 5 s at most.
    private static func forge(
        _ source: Int, as target: Int, in group: InstanceGroup, _ client: RedisClient
    ) async throws -> [UInt8] {
        var entry: CacheEntry?
        for _ in 0..<100 where entry == nil {
            if case .bulk(let stored?) = try await client.command("GET", group.prefix + "entry:" + objectKey(source)) {
                entry = CacheEntry.restored(record: stored, key: objectKey(source))
            } else {
                try await Task.sleep(for: .milliseconds(50))
            }
        }
        guard let entry else { throw ProcessFailure("object \(source)'s record is not in Redis") }
        return CacheEntry(
            key: objectKey(target), kind: .object, status: 200, body: entry.body, storedAt: entry.storedAt,
            policy: FreshnessPolicy(), details: entry.details, compress: nil
        ).record
    }
}
