import MetEngine
import TestKit
import Testing

@testable import MetRedis

/// `RedisTier` over a scripted connection (`ScriptedRedis`): what it writes, under which key and
/// for how long, what it refuses to read, how its fill locks are renewed and given back, how a
/// waiter learns a fill's outcome, and what it makes of the group's notices. No Redis, no
/// sockets, no sleeps: the tier's timers run when a test fires them. The Lua scripts themselves
/// run against a real Redis in the integration tests (`MultiInstanceTests`, `RedisTrustTests`).
@Suite("The Redis tier over a scripted connection", .timeLimit(.minutes(1)))
struct RedisTierTests {
    private static let secret = "the group's secret"
    private let time = ManualTime()
    private let redis = ScriptedRedis()
    /// Seals as an instance of the group does.
    private let seal = GroupSeal(secret: RedisTierTests.secret)!
    private let channel = Array("t:events".utf8)

    private func tier(secret: String? = RedisTierTests.secret, recordLimit: Int = 65_536) throws -> RedisTier {
        try RedisTier(
            link: redis, prefix: "t:", secret: secret, recordLimit: recordLimit, time: time,
            logger: Logger(level: .error, sink: { _ in }))
    }

    /// An entry stored now: fresh for a day, then stale (and kept) for a week.
    private func entry(_ key: String = "/departments", body: String = #"{"departments":[]}"#) -> CacheEntry {
        CacheEntry(
            key: key, kind: key == "/departments" ? .departments : .objectList, status: 200, body: Array(body.utf8),
            storedAt: time.now(), policy: FreshnessPolicy())
    }

    private func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

    // MARK: Records

    @Test func aStoredEntryIsSignedKeptUntilItsStaleTimeAndReadBack() async throws {
        let tier = try tier()
        let entry = entry()
        tier.store(entry)
        let set = try #require(redis.commands.last)
        let milliseconds = Int(((entry.staleUntil - time.now()) * 1_000).rounded(.up))
        #expect(set.count == 5)
        #expect(set.first == bytes("SET"))
        #expect(set.dropFirst().first == bytes("t:entry:/departments"))
        #expect(Array(set.suffix(2)) == [bytes("PX"), bytes(String(milliseconds))])
        #expect(set[2].count == entry.record.count + GroupSeal.tagBytes)
        #expect(seal.open(set[2], .record, key: "/departments") == entry.record)

        guard case .found(let read) = await tier.entry(for: "/departments") else {
            Issue.record("the entry stored was not read back")
            return
        }
        #expect(read.record == entry.record)
        #expect(tier.status.signed)
        #expect(tier.status.refused == 0)
    }

    @Test func withoutASecretTheRecordIsStoredAsItIs() async throws {
        let tier = try tier(secret: nil)
        let entry = entry()
        tier.store(entry)
        #expect(redis.value("t:entry:/departments") == entry.record)
        guard case .found = await tier.entry(for: "/departments") else {
            Issue.record("the entry stored was not read back")
            return
        }
        #expect(!tier.status.signed)
    }

    @Test func anEntryPastItsStaleTimeOrLargerThanTheLimitIsNotStored() throws {
        let entry = entry()
        try tier(recordLimit: entry.record.count - 1).store(entry)
        time.advance(by: entry.staleUntil - time.now())
        try tier().store(entry)
        #expect(redis.commands.isEmpty)
    }

    /// Each makes what Redis holds under `t:entry:/departments` from the entry's record.
    @Test(arguments: [
        "signed with another secret", "not signed", "another key's", "damaged", "truncated", "larger than the limit",
    ])
    func aRecordNotTheGroupsOwnIsAMissAndCounted(forgery: String) async throws {
        let record = entry().record
        let other = try #require(GroupSeal(secret: "another group's secret"))
        let stored: [UInt8]? =
            switch forgery {
            case "signed with another secret": other.seal(record, .record, key: "/departments")
            case "not signed": record
            case "another key's": seal.seal(entry("/objects?departmentIds=1").record, .record, key: "/departments")
            case "damaged": seal.seal(record.map { $0 ^ 1 }, .record, key: "/departments")
            case "truncated": seal.seal(record, .record, key: "/departments").map { Array($0.dropLast()) }
            default: seal.seal(record, .record, key: "/departments")
            }
        redis.put("t:entry:/departments", try #require(stored))
        let tier = try tier(recordLimit: forgery == "larger than the limit" ? record.count - 1 : 65_536)
        guard case .missing = await tier.entry(for: "/departments") else {
            Issue.record("a record \(forgery) was not a miss")
            return
        }
        #expect(tier.status.refused == 1)
    }

    @Test func noAnswerOrAnErrorIsUnavailableNeverAMiss() async throws {
        let tier = try tier()
        redis.answer("GET", with: .error("WRONGTYPE Operation against a key holding the wrong kind of value"))
        guard case .unavailable = await tier.entry(for: "/departments") else {
            Issue.record("an error reply was not unavailable")
            return
        }
        redis.answering = false
        guard case .unavailable = await tier.entry(for: "/departments") else {
            Issue.record("no reply was not unavailable")
            return
        }
        #expect(tier.status.refused == 0)
    }

    @Test func aPurgeRemovesTheEntryAndTellsTheGroupInOneScript() async throws {
        let tier = try tier()
        redis.answer("EVAL", with: .integer(1))
        #expect(await tier.remove("/departments") == true)
        redis.answer("EVAL", with: .integer(0))
        #expect(await tier.remove("/departments") == false)
        redis.answering = false
        #expect(await tier.remove("/departments") == nil)

        let purges = redis.evaluations(of: RedisScripts.purge)
        #expect(purges.count == 3)
        let purge = try #require(purges.first)
        #expect(Array(purge.prefix(3)) == [bytes("1"), bytes("t:entry:/departments"), channel])
        #expect(seal.open(purge[3], .notice, key: "") == SharedNotice.purge(key: "/departments").payload)
    }

    @Test func anExpiryStoresTheGroupsCopyExpiredAndThenTellsTheGroup() async throws {
        let tier = try tier()
        let entry = entry()
        tier.store(entry)
        time.advance(by: 60)
        #expect(await tier.expire("/departments", at: time.now()) == true)
        // The copy is stored again before the notice is sent, on the same connection.
        let sent = redis.commands.suffix(2).map { $0.first }
        #expect(sent == [bytes("SET"), bytes("PUBLISH")])
        let publish = try #require(redis.commands.last)
        #expect(publish.count == 3)
        #expect(publish[1] == channel)
        #expect(seal.open(publish[2], .notice, key: "") == SharedNotice.expire(key: "/departments").payload)
        guard case .found(let expired) = await tier.entry(for: "/departments") else {
            Issue.record("the group's copy is gone")
            return
        }
        #expect(expired.body == entry.body)
        #expect(!expired.isFresh(at: time.now()))
        #expect(expired.isUsableWhenStale(at: time.now() + 3_600))

        // A copy already expired is not stored again; a key the group lacks is told all the same.
        let sets = redis.commands.filter { $0.first == bytes("SET") }.count
        #expect(await tier.expire("/departments", at: time.now()) == true)
        #expect(await tier.expire("/objects?departmentIds=1", at: time.now()) == false)
        #expect(redis.commands.filter { $0.first == bytes("SET") }.count == sets)
        #expect(redis.commands.filter { $0.first == bytes("PUBLISH") }.count == 3)
        // Unavailable: nothing is told.
        redis.answering = false
        #expect(await tier.expire("/departments", at: time.now()) == nil)
        #expect(redis.commands.filter { $0.first == bytes("PUBLISH") }.count == 3)
    }

    @Test func theGroupsLastSyncIsKeptSignedAndAForgedOneIsNone() async throws {
        let tier = try tier()
        #expect(await tier.lastGroupSync() == SharedSyncMark.none)
        tier.recordGroupSync(startedAt: 1_800_000_000.25)
        let set = try #require(redis.commands.last)
        #expect(Array(set.prefix(2)) == [bytes("SET"), bytes("t:sync")])
        #expect(set.count == 3)  // kept until replaced
        #expect(seal.open(set[2], .record, key: "sync") == bytes("1800000000.25"))
        #expect(await tier.lastGroupSync() == .startedAt(1_800_000_000.25))

        redis.put("t:sync", bytes("1900000000"))  // not signed
        #expect(await tier.lastGroupSync() == SharedSyncMark.none)
        redis.put("t:sync", try #require(seal.seal(bytes("soon"), .record, key: "sync")))
        #expect(await tier.lastGroupSync() == SharedSyncMark.none)
        #expect(tier.status.refused == 2)
        redis.answering = false
        #expect(await tier.lastGroupSync() == .unavailable)
    }

    // MARK: Fill locks

    @Test func aLockHeldIsRenewedEveryThirdOfItsLeaseUntilReleased() async throws {
        let tier = try tier()
        guard case .acquired(let token) = await tier.lock("/departments") else {
            Issue.record("the lock was not acquired")
            return
        }
        #expect(
            redis.commands.last == [
                bytes("SET"), bytes("t:lock:/departments"), bytes(token), bytes("NX"), bytes("PX"), bytes("3000"),
            ])
        #expect(redis.timerDelays == [RedisTier.lockLease / 3])
        guard case .acquired(let second) = await tier.lock("/objects?departmentIds=1") else {
            Issue.record("the second lock was not acquired")
            return
        }
        #expect(redis.timerDelays.count == 1, "one renewal for every lock held")

        redis.fireTimers()
        let renewal = try #require(redis.evaluations(of: RedisScripts.renew).last)
        #expect(renewal.first == bytes("2"))
        let pairs = Set(
            [0, 1].map {
                String(decoding: renewal[1 + $0], as: UTF8.self) + " "
                    + String(decoding: renewal[4 + $0], as: UTF8.self)
            })
        #expect(pairs == ["t:lock:/departments \(token)", "t:lock:/objects?departmentIds=1 \(second)"])
        #expect(renewal[3] == bytes("3000"))
        #expect(redis.timerDelays == [RedisTier.lockLease / 3])

        tier.release("/departments", token: token, outcome: .stored)
        let release = try #require(redis.evaluations(of: RedisScripts.release).last)
        #expect(Array(release.prefix(4)) == [bytes("1"), bytes("t:lock:/departments"), bytes(token), channel])
        #expect(
            seal.open(release[4], .notice, key: "")
                == SharedNotice.fill(key: "/departments", outcome: .stored).payload)
        redis.fireTimers()
        #expect(
            redis.evaluations(of: RedisScripts.renew).last == [
                bytes("1"), bytes("t:lock:/objects?departmentIds=1"), bytes("3000"), bytes(second),
            ])

        tier.release("/objects?departmentIds=1", token: second, outcome: .failed(.status(500)))
        redis.fireTimers()
        #expect(redis.evaluations(of: RedisScripts.renew).count == 2, "nothing held, nothing renewed")
        #expect(redis.timerDelays.isEmpty)
    }

    @Test func aLockAnotherInstanceHoldsIsHeld() async throws {
        redis.put("t:lock:/departments", bytes("another instance's token"))
        #expect(try await tier().lock("/departments") == .held)
        #expect(redis.timerDelays.isEmpty)
    }

    @Test func aLockAskedForWithoutAnAnswerIsGivenBackOnceRedisAnswersAgain() async throws {
        let tier = try tier()
        redis.answering = false
        #expect(await tier.lock("/departments") == .unavailable)
        let asked = try #require(redis.commands.last)
        redis.answering = true
        guard case .acquired(let held) = await tier.lock("/objects?departmentIds=1") else {
            Issue.record("the second lock was not acquired")
            return
        }

        redis.becomeReady()
        #expect(
            redis.evaluations(of: RedisScripts.releaseQuietly) == [
                [bytes("1"), bytes("t:lock:/departments"), asked[2]]
            ])
        // A stall may have eaten the lease of the lock held: renewed at once.
        #expect(
            redis.evaluations(of: RedisScripts.renew) == [
                [bytes("1"), bytes("t:lock:/objects?departmentIds=1"), bytes("3000"), bytes(held)]
            ])
        redis.becomeReady()
        #expect(redis.evaluations(of: RedisScripts.releaseQuietly).count == 1, "given back once")
    }

    // MARK: Waiting for another instance's fill

    /// Starts `awaitFill` for `/departments` and returns once the waiter is registered (its
    /// deadline scheduled, the look for an entry already there answered).
    private func waiter(_ tier: RedisTier, freshAt: Double? = nil) async -> Task<SharedWait, Never> {
        let freshAt = freshAt ?? time.now()
        let deadline = time.now() + 2.5
        let task = Task { await tier.awaitFill("/departments", freshAt: freshAt, until: deadline) }
        await redis.waitForTimers(1)
        await redis.waitForCommands("GET", count: 1)
        #expect(redis.timerDelays == [2.5])
        return task
    }

    private func publish(_ notice: SharedNotice) {
        redis.publish(seal.seal(notice.payload, .notice, key: "")!)
    }

    @Test func aWaiterIsHandedTheEntryOnceItsFillIsAnnounced() async throws {
        let tier = try tier()
        let waiting = await waiter(tier)
        let entry = entry()
        tier.store(entry)
        publish(.fill(key: "/departments", outcome: .stored))
        guard case .found(let found) = await waiting.value else {
            Issue.record("the announced entry was not found")
            return
        }
        #expect(found.record == entry.record)
    }

    @Test(arguments: [SharedFillOutcome.failed(.status(500)), .failed(.timeout), .abandoned])
    func aWaiterIsToldAFillThatStoredNothing(outcome: SharedFillOutcome) async throws {
        let waiting = await waiter(try tier())
        publish(.fill(key: "/departments", outcome: outcome))
        switch (await waiting.value, outcome) {
        case (.failed(let told), .failed(let sent)): #expect(told == sent)
        case (.nothing, .abandoned): break
        case (let wait, _): Issue.record("\(outcome) was told as \(wait)")
        }
    }

    @Test func anEntryThereBeforeTheWaitBeganEndsItAtOnce() async throws {
        let tier = try tier()
        tier.store(entry())
        let deadline = time.now() + 2.5
        guard case .found = await tier.awaitFill("/departments", freshAt: time.now(), until: deadline) else {
            Issue.record("the entry already there was not found")
            return
        }
    }

    @Test func aWaiterSeesNothingAtItsDeadlineAndAnEntryTooOldIsNotTheFill() async throws {
        let tier = try tier()
        let entry = entry()
        tier.store(entry)
        // The entry there is older than the one waited for: the wait goes on to its deadline.
        let waiting = await waiter(tier, freshAt: entry.freshUntil + 1)
        // A notice without the group's signature is refused and ends nothing.
        redis.publish(SharedNotice.fill(key: "/departments", outcome: .stored).payload)
        #expect(tier.status.refused == 1)
        redis.fireTimers()
        guard case .nothing = await waiting.value else {
            Issue.record("the deadline did not end the wait")
            return
        }
        // The fill announced after the deadline finds no one waiting.
        publish(.fill(key: "/departments", outcome: .stored))
    }

    // MARK: The group's budget, breaker and notices

    @Test func aTokenIsTakenFromTheGroupsBudget() async throws {
        let tier = try tier()
        redis.answer("EVAL", with: .integer(0))
        #expect(await tier.takeToken(ratePerSecond: 2, burst: 4, budget: "") == .granted)
        #expect(
            redis.evaluations(of: RedisScripts.takeToken) == [
                [bytes("1"), bytes("t:budget"), bytes("500000"), bytes("4")]
            ])
        redis.answer("EVAL", with: .integer(250_000))
        #expect(await tier.takeToken(ratePerSecond: 2, burst: 4, budget: "") == .wait(seconds: 0.25))
        redis.answer("EVAL", with: .error("NOSCRIPT"))
        #expect(await tier.takeToken(ratePerSecond: 2, burst: 4, budget: "") == .unavailable)
        redis.answering = false
        #expect(await tier.takeToken(ratePerSecond: 2, burst: 4, budget: "") == .unavailable)
    }

    @Test func aBlockIsAnnouncedAsADurationAndAdoptedOnReconnection() async throws {
        let tier = try tier()
        let events = Locked<[SharedEvent]>([])
        let (adopted, adoption) = AsyncStream.makeStream(of: SharedEvent.self)
        tier.onEvent { event in
            events.withLock { $0.append(event) }
            adoption.yield(event)
        }
        tier.announceBlock(for: 1.2345, budget: "")
        tier.announceBlock(for: 0, budget: "")
        let blocks = redis.evaluations(of: RedisScripts.block)
        #expect(blocks.count == 1)
        #expect(Array(blocks[0].prefix(4)) == [bytes("1"), bytes("t:breaker"), bytes("1235"), channel])
        #expect(seal.open(blocks[0][4], .notice, key: "") == bytes("pause\n1.2345"))
        #expect(events.withLock { $0 }.isEmpty, "an instance is not told its own announcement")

        // Connected while another instance's block lasts: what is left of it, on Redis's clock.
        redis.answer("PTTL", with: .integer(12_500))
        redis.becomeReady()
        var iterator = adopted.makeAsyncIterator()
        #expect(await iterator.next() == .blocked(seconds: 12.5, budget: ""))
        #expect(redis.commands.last == [bytes("PTTL"), bytes("t:breaker")])
    }

    @Test func signedNoticesOfPurgesExpiriesAndBlocksReachTheHandlerAndOthersDoNot() throws {
        let tier = try tier()
        let events = Locked<[SharedEvent]>([])
        tier.onEvent { event in events.withLock { $0.append(event) } }
        publish(.purge(key: "/objects/1"))
        publish(.expire(key: "/objects/4"))
        publish(.block(seconds: 30, budget: ""))
        // Unsigned, signed as a record, or not a notice at all.
        redis.publish(SharedNotice.purge(key: "/objects/2").payload)
        redis.publish(seal.seal(SharedNotice.purge(key: "/objects/3").payload, .record, key: "")!)
        redis.publish(seal.seal(bytes("hello"), .notice, key: "")!)
        #expect(
            events.withLock { $0 } == [
                .purged(key: "/objects/1"), .expired(key: "/objects/4"), .blocked(seconds: 30, budget: ""),
            ])
        #expect(tier.status.refused == 2)
    }
}
