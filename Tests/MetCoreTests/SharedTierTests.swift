import Foundation
import TestKit
import Testing

@testable import MetCore
@testable import MetEngine

/// Several instances over one shared tier (`FakeGroup`, on one manual clock): memory → disk →
/// shared → upstream, one fetch per key for the whole group, purges and blocks told to every
/// instance, one upstream budget, and each instance carrying on alone when the tier is down.
@Suite("The shared tier")
struct SharedTierTests {
    /// Objects fresh for 100 s, stale-if-error 1,000 s after; one clock and one group for all.
    private struct Group {
        let time = ManualTime()
        let group: FakeGroup

        init() {
            group = FakeGroup(time: time)
        }

        func instance(_ upstream: FakeUpstream, configure: (inout ServerConfiguration) -> Void = { _ in }) -> Harness {
            Harness(upstream: upstream, shared: group.member(), time: time) { configuration in
                configuration.upstream.searchAPI = .v1
                configuration.cache.freshness.object = 100
                configuration.cache.freshness.staleIfError = 1_000
                configure(&configuration)
            }
        }
    }

    private static func record(_ id: Int, title: String = "Wheat Field with Cypresses") -> FakeUpstream {
        FakeUpstream([Sample.objectKey(id): .json(Sample.object(id, title: title))])
    }

    @Test func whatOneInstanceFetchedTheOthersServeWithoutTheUpstream() async throws {
        let group = Group()
        let first = group.instance(Self.record(1))
        let fetched = await first.get("/objects/1")
        #expect(fetched.cacheOutcome == .miss)
        #expect(group.group.keys == [Sample.objectKey(1)])

        let upstream = FakeUpstream()
        let second = group.instance(upstream)
        group.time.advance(by: 30)
        // Suspended: the shared tier is asked once the suspension begins, without a task.
        #expect(second.getImmediately("/objects/1") == nil)
        let before = group.group.lookups
        let shared = await second.get("/objects/1")
        #expect(group.group.lookups.withoutTask == before.withoutTask + 1)
        #expect(group.group.lookups.inTasks == before.inTasks)
        #expect(shared.status == 200)
        #expect(shared.body == fetched.body)
        #expect(shared.headers["ETag"] == fetched.headers["ETag"])
        #expect(shared.headers["Cache-Status"] == "TheMet; hit; ttl=70; detail=redis")
        #expect(shared.headers["Age"] == "30")
        #expect(upstream.calls.isEmpty)
        // Now the instance's own memory holds it.
        #expect(second.getImmediately("/objects/1")?.cacheOutcome == .hit)
        #expect(second.service.engine.cache.statistics.sharedHits == 1)
    }

    /// The one lookup without a task is for an entry the shared tier holds fresh; anything else
    /// (none, an expired one, the tier down) sends the request to a task, which asks again and
    /// goes on as before: a fetch, stale-if-error, or the instance alone.
    @Test func whatTheSharedTierHasNotFreshIsResolvedInATask() async throws {
        let group = Group()
        let upstream = Self.record(1)
        let instance = group.instance(upstream)
        var before = group.group.lookups
        #expect(await instance.get("/objects/1").cacheOutcome == .miss)
        #expect(group.group.lookups.withoutTask == before.withoutTask + 1)
        #expect(group.group.lookups.inTasks > before.inTasks)
        #expect(upstream.calls.count == 1)

        // Expired everywhere: the group's copy is not a hit; the task refreshes it.
        group.time.advance(by: 150)
        let other = group.instance(upstream)
        before = group.group.lookups
        #expect(await other.get("/objects/1").cacheOutcome == .miss)
        #expect(group.group.lookups.withoutTask == before.withoutTask + 1)
        #expect(group.group.lookups.inTasks > before.inTasks)
        #expect(upstream.calls.count == 2)

        // The tier down: asked, unavailable, and the instance fetches by itself.
        group.group.isAvailable = false
        let alone = group.instance(Self.record(2))
        #expect(await alone.get("/objects/2").cacheOutcome == .miss)
    }

    /// A need that lacks more than one entry (a search page's objects) goes to a task whole: the
    /// shared tier is not asked entry by entry from the loop. The page's ID list, one entry, is.
    @Test func aNeedOfSeveralMissingEntriesIsResolvedInATask() async throws {
        let group = Group()
        let upstream = FakeUpstream()
        upstream.answer(SearchSample.v1(), with: SearchSample.ids([1, 2]))
        SearchSample.answerObjects([1, 2], on: upstream)
        let first = group.instance(upstream)
        #expect(await first.get("/search?q=cypress").status == 200)
        let calls = upstream.calls.count

        let before = group.group.lookups
        let second = group.instance(upstream)
        let page = await second.get("/search?q=cypress")
        #expect(page.status == 200)
        #expect(upstream.calls.count == calls)
        #expect(group.group.lookups.withoutTask == before.withoutTask + 1)
        #expect(group.group.lookups.inTasks == before.inTasks + 2)
    }

    /// `/objects/1` on two instances of one group: the leader's upstream (answering from
    /// `leaderUpstream`) is held until the follower waits for the leader's fill, then released.
    /// Returns both answers and the follower's upstream, which should see no call.
    private static func leaderAndFollower(
        _ leaderUpstream: FakeUpstream
    ) async -> (led: Response, followed: Response, followerUpstream: FakeUpstream) {
        let group = Group()
        let followerUpstream = Self.record(1)
        let leader = group.instance(leaderUpstream)
        let follower = group.instance(followerUpstream)
        leaderUpstream.hold()
        async let led = leader.get("/objects/1")
        await leaderUpstream.waitForCalls(1)
        async let followed = follower.get("/objects/1")
        await waitUntil { group.group.waiting == 1 }
        leaderUpstream.release()
        let (first, second) = await (led, followed)
        return (first, second, followerUpstream)
    }

    @Test func whileOneInstanceFetchesAKeyTheOthersWaitForItsFillInsteadOfAskingToo() async throws {
        let leaderUpstream = Self.record(1)
        let (first, second, followerUpstream) = await Self.leaderAndFollower(leaderUpstream)
        #expect(first.cacheOutcome == .miss)
        #expect(second.cacheOutcome == .collapsed)
        #expect(second.body == first.body)
        #expect(leaderUpstream.calls.count == 1)
        #expect(followerUpstream.calls.isEmpty)
    }

    @Test func aFillThatLandsBetweenTheLookAndTheLockIsNotFetchedAgain() async throws {
        let group = Group()
        let other = group.instance(Self.record(1))
        let upstream = Self.record(1)
        let instance = group.instance(upstream)
        // Another instance fetches and lets go of the lock after this one looked and missed.
        _ = await other.get("/objects/1")
        let entry = try #require(other.service.engine.cache.entry(for: Sample.objectKey(1)))
        var request = Request(method: "DELETE", target: "/cache/objects/1", headers: HTTPFields())
        request.peer = .loopback
        _ = await other.service.response(to: request)
        let member = group.group.member()
        group.group.beforeNextLock { member.store(entry) }
        let answer = await instance.get("/objects/1")
        #expect(answer.status == 200)
        #expect(answer.cacheOutcome == .collapsed)
        #expect(upstream.calls.isEmpty)
    }

    @Test func theWaitersShareTheHoldersFailureInsteadOfEachAskingInTurn() async throws {
        let (first, second, followerUpstream) = await Self.leaderAndFollower(
            FakeUpstream([Sample.objectKey(1): .errorPage(503)]))
        #expect(first.status == 503)
        #expect(second.status == 503)
        #expect(second.problemCode == first.problemCode)
        #expect(followerUpstream.calls.isEmpty)
    }

    @Test func aLockWhoseHolderDiedExpiresAndTheNextInstanceFetches() async throws {
        let group = Group()
        let upstream = Self.record(1)
        let instance = group.instance(upstream) { $0.upstream.requestTimeout = 30 }
        // A holder that dies stops renewing its lock, which then lasts one lease (3 s in Redis).
        group.group.lockAsAGhost(Sample.objectKey(1), for: 3)
        async let answer = instance.get("/objects/1")
        // Each poll interval the instance looks again, and finds the ghost's lock still held.
        for _ in 0..<8 {
            await waitUntil { group.group.waiting == 1 }
            group.time.advance(by: CachedFetcher<MetResource>.sharedPollInterval)
        }
        #expect(upstream.calls.isEmpty)
        await waitUntil { group.group.waiting == 1 }
        group.time.advance(by: 3)
        let response = await answer
        #expect(response.status == 200)
        #expect(response.cacheOutcome == .miss)
        #expect(upstream.calls.count == 1)
    }

    @Test func aWaitThatLastsAWholeFetchTimeoutEndsInAFetchOfItsOwn() async throws {
        let group = Group()
        let upstream = Self.record(1)
        let instance = group.instance(upstream) { $0.upstream.requestTimeout = 1 }
        // A lock still held after any live holder would have finished: its release was lost.
        group.group.lockAsAGhost(Sample.objectKey(1), for: 600)
        async let answer = instance.get("/objects/1")
        for _ in 0..<3 {
            await waitUntil { group.group.waiting == 1 }
            #expect(upstream.calls.isEmpty)
            group.time.advance(by: CachedFetcher<MetResource>.sharedPollInterval)
        }
        await waitUntil { group.group.waiting == 1 }
        group.time.advance(by: CachedFetcher<MetResource>.sharedPollInterval)
        let response = await answer
        #expect(response.status == 200)
        #expect(upstream.calls.count == 1)
    }

    @Test func withTheTierDownEachInstanceServesAndFetchesByItself() async throws {
        let group = Group()
        let first = group.instance(Self.record(1))
        _ = await first.get("/objects/1")
        group.group.isAvailable = false
        // Its own memory still answers at once, and a miss still gets fetched.
        #expect(first.getImmediately("/objects/1")?.cacheOutcome == .hit)
        let upstream = Self.record(1)
        let second = group.instance(upstream)
        let fetched = await second.get("/objects/1")
        #expect(fetched.status == 200)
        #expect(fetched.cacheOutcome == .miss)
        #expect(upstream.calls.count == 1)
    }

    /// Two instances holding object 1 (the second read it from the group, and its upstream has
    /// it retitled), then `target`, a purge, asked of the first from this machine: the group, the
    /// second instance and its upstream, and the purge's answer.
    private static func purgedOnTheFirst(
        _ target: String
    ) async throws -> (group: Group, second: Harness, upstream: FakeUpstream, document: [String: Any]) {
        let group = Group()
        let first = group.instance(Self.record(1))
        let secondUpstream = Self.record(1, title: "Retitled")
        let second = group.instance(secondUpstream)
        _ = await first.get("/objects/1")
        #expect(await second.get("/objects/1").cacheOutcome == .sharedHit)
        #expect(second.getImmediately("/objects/1")?.cacheOutcome == .hit)

        var request = Request(method: "DELETE", target: target, headers: HTTPFields())
        request.peer = .loopback
        let purge = await first.service.response(to: request)
        #expect(purge.status == 200)
        return (group, second, secondUpstream, try purge.jsonObject())
    }

    @Test func aPurgeOnOneInstanceDropsTheOthersCopies() async throws {
        let (group, second, _, document) = try await Self.purgedOnTheFirst("/cache/objects/1")
        #expect(document["removedFromMemory"] as? Int == 1)
        #expect(document["removedFromRedis"] as? Int == 1)
        #expect(group.group.keys.isEmpty)
        #expect(second.getImmediately("/objects/1") == nil)  // no longer in its memory
        let refetched = await second.get("/objects/1")
        #expect(refetched.cacheOutcome == .miss)
        #expect(refetched.text.contains("Retitled"))
    }

    @Test func aRowReadBackWhileAPurgeNoticeIsHandledIsNotLeftInMemory() async throws {
        let group = Group()
        let first = group.instance(Self.record(1))
        let disk = RecordingTier(atOnce: true)
        let second = Harness(
            upstream: Self.record(1, title: "Retitled"), disk: disk, shared: group.group.member(), time: group.time
        ) {
            $0.upstream.searchAPI = .v1
        }
        _ = await first.get("/objects/1")
        #expect(await second.get("/objects/1").cacheOutcome == .sharedHit)
        // A request to the second instance after the notice dropped its memory copy, before its
        // row is removed: the row is read back into memory.
        let readBack = Locked<Response?>(nil)
        disk.beforeRemoval.withLock { hook in
            hook = { readBack.withLock { $0 = second.getImmediately("/objects/1") } }
        }
        var request = Request(method: "DELETE", target: "/cache/objects/1", headers: HTTPFields())
        request.peer = .loopback
        #expect(await first.service.response(to: request).status == 200)
        await waitUntil { disk.keys.isEmpty }
        await waitUntil { second.getImmediately("/objects/1") == nil }
        #expect(readBack.withLock { $0 }?.cacheOutcome == .diskHit)
        #expect(await second.get("/objects/1").text.contains("Retitled"))
    }

    @Test func aSoftPurgeOnOneInstanceExpiresEveryCopyAndEachIsRefreshedAtItsNextRequest() async throws {
        let (group, second, secondUpstream, document) = try await Self.purgedOnTheFirst("/cache/objects/1?soft=true")
        #expect(document["soft"] as? Bool == true)
        #expect(document["expiredInMemory"] as? Int == 1)
        #expect(document["expiredOnDisk"] as? Int == 0)
        #expect(document["expiredInRedis"] as? Int == 1)
        // The group's copy stays, expired; the second instance's own copy is expired by the notice.
        #expect(group.group.keys == [Sample.objectKey(1)])
        guard case .found(let shared) = await group.group.member().entry(for: Sample.objectKey(1)) else {
            Issue.record("the group's copy is gone")
            return
        }
        #expect(!shared.isFresh(at: group.time.now()))
        await waitUntil { second.getImmediately("/objects/1")?.cacheOutcome != .hit }
        let refreshed = await second.get("/objects/1")
        #expect(refreshed.text.contains("Retitled"))
        #expect(secondUpstream.calls.count == 1)
    }

    @Test func aBlockOneInstanceSeesStopsEveryInstance() async throws {
        let group = Group()
        let blockedUpstream = FakeUpstream([Sample.objectKey(1): .blockPage])
        let otherUpstream = Self.record(2)
        let first = group.instance(blockedUpstream)
        let second = group.instance(otherUpstream)
        #expect(await first.get("/objects/1").status == 503)
        let refused = await second.get("/objects/2")
        #expect(refused.status == 503)
        #expect(otherUpstream.calls.isEmpty)
        let health = try #require(second.getImmediately("/health")).jsonObject()
        let upstream = health["upstream"] as? [String: Any]
        #expect(upstream?["state"] as? String == "blocked")
        // The block ends for both at the first's cool-down.
        group.time.advance(by: 61)
        #expect(await second.get("/objects/2").status == 200)
    }

    /// A block notice is a duration, and no notice, whatever clock or intent sent it, blocks longer
    /// than the longest cool-down (15 minutes by default).
    @Test(arguments: [7_200.0, 1e12])
    func aBlockAnnouncedByAnotherInstanceIsCappedAtTheLongestCooldown(seconds: Double) async throws {
        let group = Group()
        let instance = group.instance(Self.record(1))
        group.group.member().announceBlock(for: seconds, budget: "")
        let limit = instance.service.engine.monitor.cooldownLimit
        #expect(instance.service.engine.monitor.blockedUntil(at: group.time.now()) == group.time.now() + limit)
        #expect(await instance.get("/objects/1").status == 503)
        group.time.advance(by: limit)
        #expect(await instance.get("/objects/1").status == 200)
    }

    @Test(arguments: [0.0, -5, .nan, .infinity])
    func aNoticeOfNoBlockBlocksNothing(seconds: Double) async throws {
        let group = Group()
        let instance = group.instance(Self.record(1))
        instance.service.engine.monitor.adoptBlock(for: seconds, at: group.time.now())
        #expect(instance.service.engine.monitor.blockedUntil(at: group.time.now()) == nil)
        #expect(await instance.get("/objects/1").status == 200)
    }

    @Test func theGroupSharesOneBudget() async throws {
        let group = Group()
        let configure: (inout ServerConfiguration) -> Void = {
            $0.upstream.rate = 1
            $0.upstream.burst = 2
            $0.upstream.concurrency = 8
        }
        let firstUpstream = FakeUpstream(
            (1...4).reduce(into: [:]) { $0[Sample.objectKey($1)] = .json(Sample.object($1)) })
        let secondUpstream = FakeUpstream(
            (5...8).reduce(into: [:]) { $0[Sample.objectKey($1)] = .json(Sample.object($1)) })
        let first = group.instance(firstUpstream, configure: configure)
        let second = group.instance(secondUpstream, configure: configure)
        // Each instance's own pacer would let its first two through; the group's budget lets two
        // through in all.
        async let a = first.get("/objects/1")
        async let b = first.get("/objects/2")
        async let c = second.get("/objects/5")
        async let d = second.get("/objects/6")
        await waitUntil { firstUpstream.calls.count + secondUpstream.calls.count == 2 }
        #expect(group.group.tokensTaken == 2)
        group.time.advance(by: 1)
        await waitUntil { firstUpstream.calls.count + secondUpstream.calls.count == 3 }
        group.time.advance(by: 1)
        let answers = await [a, b, c, d]
        #expect(answers.allSatisfy { $0.status == 200 })
        #expect(group.group.tokensTaken == 4)
    }

    @Test func withTheTierDownTheFallbackRateApplies() async throws {
        let group = Group()
        group.group.isAvailable = false
        let upstream = FakeUpstream((1...3).reduce(into: [:]) { $0[Sample.objectKey($1)] = .json(Sample.object($1)) })
        let instance = group.instance(upstream) {
            $0.upstream.rate = 4
            $0.upstream.burst = 3
            $0.upstream.concurrency = 8
            $0.redis.fallbackRate = 0.5
        }
        async let a = instance.get("/objects/1")
        async let b = instance.get("/objects/2")
        async let c = instance.get("/objects/3")
        await waitUntil { upstream.calls.count == 1 }
        group.time.advance(by: 1)
        #expect(upstream.calls.count == 1)  // 4/s alone would have let all three through by now
        group.time.advance(by: 1)
        await waitUntil { upstream.calls.count == 2 }
        group.time.advance(by: 2)
        let answers = await [a, b, c]
        #expect(answers.allSatisfy { $0.status == 200 })
    }

    @Test func aSyncRefreshesWhatTheGroupHoldsInsteadOfTakingItsOldCopyForFresh() async throws {
        let group = Group()
        let directory = TemporaryDirectory()
        let upstream = Self.record(1)
        let first = Harness(upstream: upstream, shared: group.group.member(), time: group.time) {
            $0.upstream.searchAPI = .v1
            $0.cache.dataDirectory = directory.path
        }
        let second = group.instance(FakeUpstream())
        let old = await first.get("/objects/1")
        group.time.advance(by: 3_600)
        let lookBack = first.configuration.cache.freshness.object
        upstream.answer(
            .objectList(departmentIds: [], metadataDate: Synchronizer.day(of: group.time.now() - lookBack)),
            with: .json(#"{"total":1,"objectIDs":[1]}"#))
        upstream.answer(.object(id: 1), with: .json(Sample.object(1, title: "Changed")))

        let report = try await first.synchronizer.run().get()
        #expect(report.refreshed == 1)
        let refreshed = try #require(first.getImmediately("/objects/1"))
        #expect(refreshed.text.contains("Changed"))
        #expect(refreshed.body != old.body)
        // The group now holds the new record: another instance gets it, not the old one.
        let shared = await second.get("/objects/1")
        #expect(shared.cacheOutcome == .sharedHit)
        #expect(shared.body == refreshed.body)
    }

    @Test func oneInstanceSyncsForTheGroupAndTheOthersExpireTheirCopiesAndTakeTurns() async throws {
        let group = Group()
        let (firstDirectory, secondDirectory) = (TemporaryDirectory(), TemporaryDirectory())
        let firstUpstream = Self.record(1)
        let secondUpstream = FakeUpstream()
        // Records fresh for 30 days: a sync with no record of an earlier one looks 30 days back.
        let first = group.instance(firstUpstream) {
            $0.cache.dataDirectory = firstDirectory.path
            $0.cache.freshness.object = 30 * 86_400
        }
        let second = group.instance(secondUpstream) {
            $0.cache.dataDirectory = secondDirectory.path
            $0.cache.freshness.object = 30 * 86_400
        }
        _ = await first.get("/objects/1")
        #expect(await second.get("/objects/1").cacheOutcome == .sharedHit)
        group.time.advance(by: 30)
        let lookBack = first.configuration.cache.freshness.object
        let changes = MetResource.objectList(
            departmentIds: [], metadataDate: Synchronizer.day(of: group.time.now() - lookBack))
        firstUpstream.answer(changes, with: .json(#"{"total":1,"objectIDs":[1]}"#))
        firstUpstream.answer(.object(id: 1), with: .json(Sample.object(1, title: "Changed")))

        // While another instance holds the group's sync lock, a sync does nothing.
        guard case .acquired(let token) = await group.group.member().lock(Synchronizer.groupLock) else {
            Issue.record("the sync lock was not free")
            return
        }
        let skipped = try await second.synchronizer.run().get()
        #expect(skipped.anotherInstanceSyncing)
        #expect(secondUpstream.calls.isEmpty)
        group.group.member().release(Synchronizer.groupLock, token: token, outcome: .abandoned)

        let started = group.time.now()
        let report = try await first.synchronizer.run().get()
        #expect(report.listed == 1)
        #expect(report.refreshed == 1)
        #expect(firstUpstream.calls == [Sample.objectKey(1), changes.cacheKey, Sample.objectKey(1)])
        // The second instance was told: its copy is expired, and the group's refreshed one answers.
        await waitUntil { second.getImmediately("/objects/1")?.cacheOutcome != .hit }
        let refreshed = await second.get("/objects/1")
        #expect(refreshed.cacheOutcome == .sharedHit)
        #expect(refreshed.text.contains("Changed"))
        #expect(secondUpstream.calls.isEmpty)
        // Its next sync counts from the group's, not from none (one object lifetime back).
        #expect(await second.synchronizer.lastSync() == started)
        group.time.advance(by: 2 * 86_400)
        let since = MetResource.objectList(departmentIds: [], metadataDate: Synchronizer.day(of: started))
        secondUpstream.answer(since, with: .json(#"{"total":0,"objectIDs":null}"#))
        #expect(try await second.synchronizer.run().get().listed == 0)
        #expect(secondUpstream.calls == [since.cacheKey])
    }
}
