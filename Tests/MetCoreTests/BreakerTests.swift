import Testing

@testable import MetCore
@testable import MetEngine

@Suite("Firewall breaker: cool-down, doubling, cap, reset, and no calls while blocked")
struct BreakerTests {
    private static let start = 1_000_000.0

    // MARK: The monitor on its own

    @Test func aBlockPageOpensTheBreakerForTheBaseCooldown() {
        let monitor = UpstreamMonitor(blockCooldown: 60)
        #expect(monitor.currentCooldown == 60)
        monitor.record(.blocked, at: Self.start)
        #expect(monitor.blockedUntil(at: Self.start) == Self.start + 60)
        #expect(monitor.state(at: Self.start + 59.9) == .blocked(until: Self.start + 60))
        #expect(monitor.blockedUntil(at: Self.start + 60) == nil)
        #expect(monitor.state(at: Self.start + 60) == .ok)
        #expect(monitor.currentCooldown == 60)
    }

    @Test func aRepeatBlockDoublesTheCooldownUpToTheCap() {
        let monitor = UpstreamMonitor(blockCooldown: 60)
        var now = Self.start
        monitor.record(.blocked, at: now)
        for expected in [120.0, 240, 480, 900, 900] {
            let ended = monitor.blockedUntil(at: now) ?? now
            now = ended + 10  // within one cool-down after the block ended
            #expect(monitor.blockedUntil(at: now) == nil)
            monitor.record(.blocked, at: now)
            #expect(monitor.currentCooldown == expected)
            #expect(monitor.blockedUntil(at: now) == now + expected)
        }
        #expect(UpstreamMonitor.maximumCooldown == 900)
    }

    @Test func aBlockMoreThanOneCooldownAfterTheLastIsAFirstBlock() {
        let monitor = UpstreamMonitor(blockCooldown: 60)
        monitor.record(.blocked, at: Self.start)
        monitor.record(.blocked, at: Self.start + 70)  // a repeat: 120 s, until start + 190
        #expect(monitor.currentCooldown == 120)
        monitor.record(.blocked, at: Self.start + 190 + 121)  // more than 120 s after it ended
        #expect(monitor.currentCooldown == 60)
        #expect(monitor.blockedUntil(at: Self.start + 311) == Self.start + 371)
    }

    @Test(arguments: [UpstreamOutcome.ok, .notFound])
    func aUsableAnswerAfterABlockResetsTheCooldown(outcome: UpstreamOutcome) {
        let monitor = UpstreamMonitor(blockCooldown: 60)
        monitor.record(.blocked, at: Self.start)
        monitor.record(.blocked, at: Self.start + 70)
        #expect(monitor.currentCooldown == 120)
        monitor.record(outcome, at: Self.start + 190)
        #expect(monitor.currentCooldown == 60)
        // The next block, however soon, is a first one again.
        monitor.record(.blocked, at: Self.start + 195)
        #expect(monitor.blockedUntil(at: Self.start + 195) == Self.start + 255)
    }

    @Test(arguments: [UpstreamOutcome.serverError, .clientError, .unreachable, .timeout, .malformed, .cancelled])
    func otherOutcomesKeepTheCooldown(outcome: UpstreamOutcome) {
        let monitor = UpstreamMonitor(blockCooldown: 60)
        monitor.record(.blocked, at: Self.start)
        monitor.record(.blocked, at: Self.start + 70)
        monitor.record(outcome, at: Self.start + 190)
        #expect(monitor.currentCooldown == 120)
        monitor.record(.blocked, at: Self.start + 200)
        #expect(monitor.currentCooldown == 240)
    }

    @Test func anAnswerFromACallInFlightWhenTheBlockBeganChangesNothing() {
        let monitor = UpstreamMonitor(blockCooldown: 60)
        monitor.record(.blocked, at: Self.start)
        monitor.record(.blocked, at: Self.start + 70)
        monitor.record(.ok, at: Self.start + 75)  // during the block
        #expect(monitor.currentCooldown == 120)
        #expect(monitor.blockedUntil(at: Self.start + 75) == Self.start + 190)
    }

    @Test func aBlockPageDuringABlockIsNoRepeat() {
        let monitor = UpstreamMonitor(blockCooldown: 60)
        monitor.record(.blocked, at: Self.start)
        monitor.record(.blocked, at: Self.start + 5)  // a call that was already in flight
        #expect(monitor.currentCooldown == 60)
        #expect(monitor.blockedUntil(at: Self.start + 5) == Self.start + 65)
        #expect(Dictionary(uniqueKeysWithValues: monitor.counts)[.blocked] == 2)
    }

    @Test func aBaseLongerThanTheCapIsTheCap() {
        let monitor = UpstreamMonitor(blockCooldown: 1_800)
        #expect(monitor.cooldownLimit == 1_800)
        monitor.record(.blocked, at: Self.start)
        monitor.record(.blocked, at: Self.start + 1_810)
        #expect(monitor.currentCooldown == 1_800)
        #expect(monitor.blockCooldown == 1_800)
    }

    // MARK: Through the service

    private func harness(_ upstream: FakeUpstream, configure: (inout ServerConfiguration) -> Void = { _ in }) -> Harness
    {
        Harness(upstream: upstream) { configuration in
            configuration.cache.freshness.object = 100
            configuration.cache.freshness.staleIfError = 1_000
            configuration.upstream.blockCooldown = 60
            configure(&configuration)
        }
    }

    private func cooldown(_ harness: Harness) throws -> Double? {
        let document = try #require(harness.getImmediately("/health")).jsonObject()
        return (document["upstream"] as? [String: Any])?["blockCooldownSeconds"] as? Double
    }

    @Test func aRepeatBlockDoublesRetryAfterAndASuccessResetsIt() async throws {
        let upstream = FakeUpstream([Sample.objectKey(1): .blockPage])
        let harness = harness(upstream)

        let first = await harness.get("/objects/1")
        #expect(first.problemCode == "upstream_blocked")
        #expect(first.headers["Retry-After"] == "60")
        #expect(try cooldown(harness) == 60)

        harness.time.advance(by: 60)  // the breaker closes; the firewall still blocks
        let repeated = await harness.get("/objects/1")
        #expect(repeated.headers["Retry-After"] == "120")
        #expect(try cooldown(harness) == 120)
        #expect(upstream.calls.count == 2)

        // During the block nothing reaches the upstream.
        harness.time.advance(by: 119)
        #expect(await harness.get("/objects/2").headers["Retry-After"] == "1")
        #expect(upstream.calls.count == 2)

        harness.time.advance(by: 1)
        upstream.answer(.object(id: 1), with: .json(Sample.object(1)))
        #expect(await harness.get("/objects/1").status == 200)
        #expect(upstream.calls.count == 3)
        #expect(try cooldown(harness) == 60)
    }

    @Test func duringABlockStaleEntriesAreServedAndUncachedRequestsRefused() async throws {
        let upstream = FakeUpstream([Sample.objectKey(1): .json(Sample.object(1)), Sample.objectKey(2): .blockPage])
        let harness = harness(upstream)
        _ = await harness.get("/objects/1")
        harness.time.advance(by: 150)  // /objects/1 is stale now

        #expect(await harness.get("/objects/2").status == 503)
        harness.time.advance(by: 10)
        let stale = await harness.get("/objects/1")
        #expect(stale.status == 200)
        #expect(stale.cacheOutcome == .stale)
        let refused = await harness.get("/objects/3")
        #expect(refused.status == 503)
        #expect(refused.problemCode == "upstream_blocked")
        #expect(refused.headers["Retry-After"] == "50")
        #expect(upstream.calls == [Sample.objectKey(1), Sample.objectKey(2)])

        harness.time.advance(by: 50)  // the breaker closes by itself
        upstream.answer(.object(id: 3), with: .json(Sample.object(3)))
        #expect(await harness.get("/objects/3").status == 200)
        #expect(upstream.calls.count == 3)
    }

    @Test func callsQueuedWhenABlockBeginsNeverGoOut() async {
        let upstream = FakeUpstream([
            Sample.objectKey(1): .blockPage, Sample.objectKey(2): .json(Sample.object(2)),
            Sample.objectKey(3): .json(Sample.object(3)),
        ])
        upstream.hold()
        let harness = harness(upstream) { $0.upstream.concurrency = 1 }
        let blocked = Task { await harness.get("/objects/1") }
        await upstream.waitForCalls(1)
        let queued = [Task { await harness.get("/objects/2") }, Task { await harness.get("/objects/3") }]
        await waitUntil { harness.service.engine.pacer.figures.waiting == 2 }

        upstream.release()
        #expect(await blocked.value.problemCode == "upstream_blocked")
        for task in queued {
            let response = await task.value
            #expect(response.problemCode == "upstream_blocked")
            #expect(response.headers["Retry-After"] == "60")
        }
        #expect(upstream.calls == [Sample.objectKey(1)])
    }

    @Test func aRetryDueDuringABlockIsNotMade() async {
        let upstream = FakeUpstream([Sample.objectKey(2): .blockPage])
        upstream.answer(.object(id: 1), withEach: [.errorPage(503), .json(Sample.object(1))])
        let harness = harness(upstream) { $0.upstream.retries = 2 }
        let retrying = Task { await harness.get("/objects/1") }
        await waitUntil { upstream.calls.count == 1 && harness.time.sleeping == 1 }  // in its back-off

        #expect(await harness.get("/objects/2").problemCode == "upstream_blocked")
        if let wake = harness.time.nextDeadline { harness.time.advance(to: wake) }
        #expect(await retrying.value.problemCode == "upstream_blocked")
        #expect(upstream.calls == [Sample.objectKey(1), Sample.objectKey(2)])
    }
}
