import TestKit
import Testing

@testable import MetCore
@testable import MetEngine

@Suite(
    "Fair shares of the upstream: clients take turns, foreground first, a bounded queue each", .timeLimit(.minutes(5)))
struct FairShareTests {
    /// A deadline no test reaches.
    private static let far = 1e12

    /// One call through `pacer` for `claim` in a new task: nil when its body ran, else the error.
    /// The body appends `label` to `log`.
    private func call(
        _ pacer: UpstreamPacer, _ label: String, _ claim: UpstreamClaim?, log: Locked<[String]>,
        demand: UpstreamDemand? = nil
    ) -> Task<UpstreamError?, Never> {
        let demand = demand ?? claim.map { UpstreamDemand($0) }
        return Task {
            do throws(UpstreamError) {
                try await pacer.run(deadline: Self.far, demand: demand) { log.withLock { $0.append(label) } }
                return nil
            } catch {
                return error
            }
        }
    }

    private static func client(_ name: String) -> UpstreamClaim { UpstreamClaim(client: name, priority: .foreground) }

    /// A pacer of one call a second, one at a time, whose only token is spent: every later call queues.
    private func exhaustedPacer(_ time: ManualTime, clientLimit: Int = .max) async -> UpstreamPacer {
        let pacer = UpstreamPacer(ratePerSecond: 1, burst: 1, concurrency: 1, clientLimit: clientLimit, time: time)
        _ = await call(pacer, "first", nil, log: Locked([])).value
        return pacer
    }

    /// Lets one token through at a time until `count` calls have run.
    private func drain(_ time: ManualTime, _ log: Locked<[String]>, until count: Int) async {
        while log.withLock({ $0.count }) < count {
            time.advance(by: 1)
            let before = log.withLock { $0.count }
            await waitUntil { log.withLock { $0.count } > before || before >= count }
        }
    }

    @Test func aClientsOneCallGoesBeforeAnothersHundredth() async {
        let time = ManualTime()
        let pacer = await exhaustedPacer(time)
        let log = Locked<[String]>([])
        var calls: [Task<UpstreamError?, Never>] = []
        for index in 1...5 {
            calls.append(call(pacer, "a\(index)", Self.client("a"), log: log))
            await waitUntil { pacer.figures.waiting == index }
        }
        calls.append(call(pacer, "b1", Self.client("b"), log: log))
        await waitUntil { pacer.figures.waiting == 6 }
        #expect(pacer.figures.clientsWaiting == 2)
        await drain(time, log, until: 6)
        for call in calls { #expect(await call.value == nil) }
        // a was waiting first, so its turn comes first; then b's, then a's again.
        #expect(log.withLock { $0 } == ["a1", "b1", "a2", "a3", "a4", "a5"])
    }

    @Test func threeClientsTakeTurnsEachInTheOrderTheyAsked() async {
        let time = ManualTime()
        let pacer = await exhaustedPacer(time)
        let log = Locked<[String]>([])
        var calls: [Task<UpstreamError?, Never>] = []
        for (index, label) in ["a1", "a2", "a3", "b1", "b2", "c1"].enumerated() {
            calls.append(call(pacer, label, Self.client(String(label.prefix(1))), log: log))
            await waitUntil { pacer.figures.waiting == index + 1 }
        }
        await drain(time, log, until: 6)
        for call in calls { #expect(await call.value == nil) }
        #expect(log.withLock { $0 } == ["a1", "b1", "c1", "a2", "b2", "a3"])
    }

    @Test func foregroundCallsGoBeforeBackgroundOnes() async {
        let time = ManualTime()
        let pacer = await exhaustedPacer(time)
        let log = Locked<[String]>([])
        var calls: [Task<UpstreamError?, Never>] = []
        calls.append(call(pacer, "sync", .server, log: log))
        calls.append(call(pacer, "refresh", UpstreamClaim(client: "a", priority: .background), log: log))
        await waitUntil { pacer.figures.waiting == 2 }
        calls.append(call(pacer, "miss", Self.client("b"), log: log))
        await waitUntil { pacer.figures.waiting == 3 }
        #expect(pacer.figures.waitingInForeground == 1)
        #expect(pacer.figures.waitingInBackground == 2)
        await drain(time, log, until: 3)
        for call in calls { #expect(await call.value == nil) }
        #expect(log.withLock { $0 }.first == "miss")
    }

    @Test func aClientAtItsLimitIsRefusedWithTheTimeItsShareNeedsAndOthersAreNot() async throws {
        let time = ManualTime()
        let pacer = await exhaustedPacer(time, clientLimit: 3)
        let log = Locked<[String]>([])
        var calls: [Task<UpstreamError?, Never>] = []
        for index in 1...3 {
            calls.append(call(pacer, "a\(index)", Self.client("a"), log: log))
            await waitUntil { pacer.figures.waiting == index }
        }
        let refused = await call(pacer, "a4", Self.client("a"), log: log).value
        calls.append(call(pacer, "b1", Self.client("b"), log: log))
        await waitUntil { pacer.figures.waiting == 4 }
        // One more call of a's waits for one of its three: a turn in every round of two clients at
        // one call a second, after the next token (one second away).
        #expect(refused == .clientQueueFull(retryAfter: 2))
        #expect(pacer.figures.refused == 1)
        // The server's own work is never refused.
        calls.append(call(pacer, "sync", .server, log: log))
        await waitUntil { pacer.figures.waiting == 5 }
        await drain(time, log, until: 5)
        for call in calls { #expect(await call.value == nil) }
        #expect(!log.withLock { $0 }.contains("a4"))
        // Room again: a is let in.
        let again = call(pacer, "a5", Self.client("a"), log: log)
        await waitUntil { pacer.figures.waiting == 1 }
        time.advance(by: 1)
        #expect(await again.value == nil)
    }

    @Test func aRetryQueuesEvenPastTheLimit() async throws {
        let time = ManualTime()
        let pacer = await exhaustedPacer(time, clientLimit: 1)
        let log = Locked<[String]>([])
        let first = call(pacer, "a1", Self.client("a"), log: log)
        await waitUntil { pacer.figures.waiting == 1 }
        let retry = Task { () -> UpstreamError? in
            do throws(UpstreamError) {
                try await pacer.run(deadline: Self.far, demand: UpstreamDemand(Self.client("a")), mayRefuse: false) {
                    log.withLock { $0.append("retry") }
                }
                return nil
            } catch {
                return error
            }
        }
        await waitUntil { pacer.figures.waiting == 2 }
        await drain(time, log, until: 2)
        #expect(await first.value == nil)
        #expect(await retry.value == nil)
    }

    @Test func aCallAnotherClientJoinedStartsInThatClientsTurn() async {
        let time = ManualTime()
        let pacer = await exhaustedPacer(time)
        let log = Locked<[String]>([])
        var calls: [Task<UpstreamError?, Never>] = []
        for index in 1...3 {
            calls.append(call(pacer, "a\(index)", Self.client("a"), log: log))
            await waitUntil { pacer.figures.waiting == index }
        }
        let shared = UpstreamDemand(Self.client("a"))
        calls.append(call(pacer, "shared", nil, log: log, demand: shared))
        calls.append(call(pacer, "c1", Self.client("c"), log: log))
        await waitUntil { pacer.figures.waiting == 5 }
        // b needs the fetch a's fourth call is: it waits in b's lane too, and b is next after c.
        shared.add(Self.client("b"))
        #expect(pacer.figures.clientsWaiting == 3)
        await drain(time, log, until: 5)
        for call in calls { #expect(await call.value == nil) }
        #expect(log.withLock { $0 } == ["a1", "c1", "shared", "a2", "a3"])
        #expect(pacer.figures.waiting == 0 && pacer.figures.clientsWaiting == 0)
    }

    @Test func aForegroundClaimLiftsABackgroundCall() async {
        let time = ManualTime()
        let pacer = await exhaustedPacer(time)
        let log = Locked<[String]>([])
        let refresh = UpstreamDemand(UpstreamClaim(client: "a", priority: .background))
        let calls = [
            call(pacer, "sync", .server, log: log), call(pacer, "refresh", nil, log: log, demand: refresh),
        ]
        await waitUntil { pacer.figures.waiting == 2 }
        refresh.add(Self.client("a"))
        #expect(pacer.figures.waitingInForeground == 1)
        await drain(time, log, until: 2)
        for call in calls { #expect(await call.value == nil) }
        #expect(log.withLock { $0 } == ["refresh", "sync"])
    }

    /// Background calls that time out while the foreground keeps the pacer busy leave nothing behind
    /// in their lanes: a background lane's turn may not come for a long time.
    @Test func lanesOfCallsThatLeftAreCleanedWithoutWaitingForTheirTurn() async {
        let time = ManualTime()
        let pacer = await exhaustedPacer(time)
        let log = Locked<[String]>([])
        var calls: [Task<UpstreamError?, Never>] = []
        for index in 0..<300 {
            let claim = UpstreamClaim(client: "c\(index)", priority: .background)
            calls.append(
                Task {
                    do throws(UpstreamError) {
                        try await pacer.run(deadline: time.now() + 0.5, demand: UpstreamDemand(claim)) {}
                        return nil
                    } catch {
                        return error
                    }
                })
        }
        await waitUntil { pacer.figures.waiting == 300 }
        #expect(pacer.laneFigures == (300, 300))
        time.advance(by: 0.5)
        for call in calls { #expect(await call.value == .timeout) }
        // The next call through the pacer finds the lanes cleaned.
        let next = call(pacer, "a", Self.client("a"), log: log)
        await waitUntil { pacer.figures.waiting == 1 }
        #expect(pacer.laneFigures.tickets <= 1 && pacer.laneFigures.clients <= 1)
        time.advance(by: 1)
        #expect(await next.value == nil)
    }

    @Test func aDemandKeepsOneClaimPerClientAndClass() {
        let demand = UpstreamDemand(UpstreamClaim(client: "a", priority: .foreground))
        demand.add(UpstreamClaim(client: "a", priority: .background))
        demand.add(UpstreamClaim(client: "a", priority: .foreground))
        demand.add(UpstreamClaim(client: "b", priority: .background))
        demand.add(UpstreamClaim(client: "b", priority: .foreground))
        #expect(
            demand.claims == [
                UpstreamClaim(client: "a", priority: .foreground), UpstreamClaim(client: "b", priority: .background),
                UpstreamClaim(client: "b", priority: .foreground),
            ])
    }
}

@Suite("Fair shares through the service: 429s for a flood, a turn for everyone else", .timeLimit(.minutes(5)))
struct FairShareServiceTests {
    /// A request from `peer`.
    private static func get(_ target: String, from peer: RequestPeer, on harness: Harness) async -> Response {
        var request = Request.get(target)
        request.peer = peer
        return await harness.service.response(to: request)
    }

    private static let other = RequestPeer(address: IPAddress("192.0.2.20")!)

    /// One call a second, one at a time, five waiting per client; records 1 to 40 and 99.
    private static func harness() -> Harness {
        var answers: [String: FakeUpstream.Answer] = [:]
        for id in Array(1...40) + [99] { answers[Sample.objectKey(id)] = .json(Sample.object(id)) }
        return Harness(upstream: FakeUpstream(answers)) { configuration in
            configuration.upstream.rate = 1
            configuration.upstream.burst = 1
            configuration.upstream.concurrency = 1
            configuration.access.clientQueue = 5
        }
    }

    @Test func aFloodGets429sWhileAnotherClientsMissIsServedInItsTurn() async throws {
        let harness = Self.harness()
        // The flood: batches that wait for nothing, the way a script would send them.
        let flood = await Self.get(
            "/objects?wait=0&ids=" + (1...20).map(String.init).joined(separator: ","),
            from: .lan, on: harness)
        #expect(flood.status == 429)
        #expect(flood.problemCode == "too_many_requests")
        let retryAfter = try #require(flood.headers["Retry-After"].flatMap(Int.init))
        #expect(retryAfter >= 1)
        // What fitted in the client's share was started: five fetches, the first at once, four wait.
        await waitUntil { harness.service.engine.pacer.figures.waiting == 4 }
        await waitUntil { harness.service.engine.backgroundFillsRunning == 4 }
        // A single miss takes the fifth place in the pacer, and the next one finds none.
        let fifth = Task { await Self.get("/objects/30", from: .lan, on: harness) }
        await waitUntil { harness.service.engine.pacer.figures.waiting == 5 }
        let again = await Self.get("/objects/31", from: .lan, on: harness)
        #expect(again.status == 429)
        #expect(again.headers["Retry-After"] != nil)

        // Another client's miss waits one turn of the flood's, not five.
        let other = Task { await Self.get("/objects/99", from: Self.other, on: harness) }
        await waitUntil { harness.service.engine.pacer.figures.waiting == 6 }
        for _ in 0..<2 {
            harness.time.advance(by: 1)
            await waitUntil { harness.service.engine.pacer.figures.waiting < 6 }
            if harness.upstream.calls.contains(Sample.objectKey(99)) { break }
        }
        #expect(await other.value.status == 200)
        #expect(harness.upstream.calls.count <= 3)
        // Hits are never limited, whoever asks.
        let hit = await Self.get("/objects/99", from: .lan, on: harness)
        #expect(hit.status == 200 && hit.cacheOutcome == .hit)
        fifth.cancel()
        #expect(await fifth.value.status == 499)
    }

    /// A client that asks again for a page whose fetches are under way (as the explorer does for
    /// pending objects) joins them: that is no new share of the upstream, and no 429.
    @Test func askingAgainForPendingObjectsIsNoNewShare() async throws {
        let harness = Self.harness()
        let ids = "/objects?wait=0&ids=" + (1...5).map(String.init).joined(separator: ",")
        let first = await Self.get(ids, from: .lan, on: harness)
        #expect(first.status == 200)
        await waitUntil { harness.service.engine.pacer.figures.waiting == 4 }
        // The one fetch let through: whichever of the five reached the pacer first (the page's
        // fetches start side by side), stored before the page is asked for again.
        await waitUntil { harness.upstream.calls.count == 1 }
        let fetched = try #require((1...5).first { harness.upstream.calls == [Sample.objectKey($0)] })
        await waitUntil { harness.service.engine.cache.entry(for: Sample.objectKey(fetched)) != nil }
        for _ in 0..<3 {
            let again = await Self.get(ids, from: .lan, on: harness)
            #expect(again.status == 200)
            #expect(try again.jsonObject()["pending"] as? [Int] == (1...5).filter { $0 != fetched })
        }
        #expect(harness.service.engine.pacer.figures.waiting == 4)
        #expect(harness.upstream.calls.count == 1)
    }

    @Test func healthAndMetricsShowTheQueuesByClassAndNeverAnAddress() async throws {
        let harness = Self.harness()
        _ = await Self.get("/objects?wait=0&ids=1,2,3", from: .lan, on: harness)
        await waitUntil { harness.service.engine.pacer.figures.waiting == 2 }
        let health = try #require(harness.getImmediately("/health")).jsonObject()
        let upstream = try #require(health["upstream"] as? [String: Any])
        let pacer = try #require(upstream["pacer"] as? [String: Any])
        #expect(pacer["waiting"] as? Int == 2)
        let byClass = try #require(pacer["waitingByClass"] as? [String: Any])
        #expect(byClass["foreground"] as? Int == 2)
        #expect(byClass["background"] as? Int == 0)
        #expect(pacer["clientsWaiting"] as? Int == 1)
        #expect(pacer["clientQueue"] as? Int == 5)
        let metrics = try #require(harness.getImmediately("/metrics")).text
        #expect(metrics.contains("themet_upstream_queue{class=\"foreground\"} 2"))
        #expect(metrics.contains("themet_upstream_queue_clients 1"))
        #expect(!metrics.contains("192.0.2"))
        #expect(
            !String(decoding: try #require(harness.getImmediately("/health")).body, as: UTF8.self)
                .contains("192.0.2"))
    }
}
