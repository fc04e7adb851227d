import Testing

@testable import MetCore
@testable import MetEngine

// The limit catches a hang, not slowness: alone the suite takes a second or two, but under
// ThreadSanitizer, started beside every other suite on two cores, its fifty rounds of
// cancellation have taken over a minute.
@Suite("Single flight: concurrent misses share one upstream call", .timeLimit(.minutes(5)))
struct SingleFlightTests {
    private static let key = Sample.objectKey(1)

    private func harness() -> Harness {
        let upstream = FakeUpstream([Self.key: .json(Sample.object(1))])
        upstream.hold()
        return Harness(upstream: upstream)
    }

    @Test func aMissWhoseEntryArrivedAfterTheLoopLookedDoesNotAskAgain() async throws {
        let upstream = FakeUpstream([Self.key: .json(Sample.object(1))])
        let harness = Harness(upstream: upstream)
        // Looked up on the loop: a miss, suspended but not yet run.
        guard case .suspended(let late) = harness.service.respond(to: .get("/objects/1")) else {
            Issue.record("a cold object was answered at once")
            return
        }
        // Meanwhile another request's flight fetches and stores the entry, and ends.
        #expect(await harness.get("/objects/1").status == 200)
        let response = await late.response()
        #expect(response.status == 200)
        #expect(response.headers["Cache-Status"] == "TheMet; fwd=uri-miss; collapsed")
        #expect(upstream.calls == [Self.key])
    }

    @Test(arguments: [2, 5, 20])
    func concurrentMissesMakeOneUpstreamCall(requests: Int) async throws {
        let harness = harness()
        let responses = await withTaskGroup(of: Response.self) { group in
            for _ in 0..<requests {
                group.addTask { await harness.get("/objects/1") }
            }
            await harness.upstream.waitForCalls(1)
            await waitUntil { harness.service.engine.flights.waiterCount(for: Self.key) == requests }
            harness.upstream.release()
            return await group.reduce(into: []) { $0.append($1) }
        }
        #expect(harness.upstream.calls == [Self.key])
        #expect(responses.allSatisfy { $0.status == 200 && $0.body == Array(Sample.object(1).utf8) })
        let statuses = responses.compactMap { $0.headers["Cache-Status"] }.sorted()
        #expect(statuses.filter { $0 == "TheMet; fwd=uri-miss; stored" }.count == 1)
        #expect(statuses.filter { $0 == "TheMet; fwd=uri-miss; collapsed" }.count == requests - 1)
        let figures = harness.service.engine.cache.statistics
        #expect(figures.misses == 1)
        #expect(figures.collapsed == requests - 1)
        #expect(harness.service.engine.flights.inFlight == 0)
    }

    @Test func differentKeysDoNotShareACall() async {
        let harness = harness()
        harness.upstream.answer(.object(id: 2), with: .json(Sample.object(2)))
        async let one = harness.get("/objects/1")
        async let two = harness.get("/objects/2")
        await harness.upstream.waitForCalls(2)
        #expect(harness.service.engine.flights.inFlight == 2)
        harness.upstream.release()
        #expect(await [one.status, two.status] == [200, 200])
        #expect(Set(harness.upstream.calls) == [Sample.objectKey(1), Sample.objectKey(2)])
    }

    @Test func aCancelledWaiterLeavesWhileTheOthersStillGetTheAnswer() async throws {
        let harness = harness()
        let leader = Task { await harness.get("/objects/1") }
        await harness.upstream.waitForCalls(1)
        let follower = Task { await harness.get("/objects/1") }
        await waitUntil { harness.service.engine.flights.waiterCount(for: Self.key) == 2 }

        // The first caller started the fetch, but the fetch belongs to every waiter.
        leader.cancel()
        let cancelled = await leader.value
        #expect(cancelled.status == 499)
        #expect(harness.service.engine.flights.waiterCount(for: Self.key) == 1)
        #expect(harness.upstream.cancellations.isEmpty)

        harness.upstream.release()
        let served = await follower.value
        #expect(served.status == 200)
        #expect(served.headers["Cache-Status"] == "TheMet; fwd=uri-miss; collapsed")
        #expect(harness.upstream.calls == [Self.key])
        #expect(harness.upstream.cancellations.isEmpty)
        // The answer was stored for later requests too.
        #expect(harness.getImmediately("/objects/1")?.status == 200)
    }

    @Test func whenEveryWaiterHasLeftTheCallStillFillsTheCache() async throws {
        let harness = harness()
        let first = Task { await harness.get("/objects/1") }
        let second = Task { await harness.get("/objects/1") }
        await harness.upstream.waitForCalls(1)
        await waitUntil { harness.service.engine.flights.waiterCount(for: Self.key) == 2 }

        first.cancel()
        second.cancel()
        #expect(await first.value.status == 499)
        #expect(await second.value.status == 499)
        #expect(harness.service.engine.flights.inFlight == 1)  // the call goes on, without waiters

        // A request arriving meanwhile joins it rather than asking again.
        let late = Task { await harness.get("/objects/1") }
        await waitUntil { harness.service.engine.flights.waiterCount(for: Self.key) == 1 }
        harness.upstream.release()
        #expect(await late.value.headers["Cache-Status"] == "TheMet; fwd=uri-miss; collapsed")
        await waitUntil { harness.service.engine.flights.inFlight == 0 }
        #expect(harness.upstream.cancellations.isEmpty)
        #expect(harness.upstream.calls == [Self.key])
        #expect(harness.getImmediately("/objects/1")?.cacheOutcome == .hit)
    }

    @Test func theOnlyWaiterCancelledAtOnceLeavesTheCallRunning() async {
        // Cancelling straight after the call arrives stops the wait, never the call.
        for _ in 0..<50 {
            let harness = harness()
            let only = Task { await harness.get("/objects/1") }
            await harness.upstream.waitForCalls(1)
            only.cancel()
            #expect(await only.value.status == 499)
            harness.upstream.release()
            await waitUntil { harness.service.engine.flights.inFlight == 0 }
            #expect(harness.upstream.cancellations.isEmpty)
            #expect(harness.getImmediately("/objects/1")?.status == 200)
        }
    }

    @Test func aRequestCancelledBeforeItStartsMakesNoCall() async {
        let harness = harness()
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return await harness.get("/objects/1")
        }
        #expect(await task.value.status == 499)
        #expect(harness.upstream.calls.isEmpty)
    }

    @Test func singleFlightRunsOneOperationPerKeyAndReportsWhoJoined() async {
        let flights = SingleFlight<Int>()
        let runs = Locked(0)
        let gate = FakeUpstream([:])
        gate.hold()
        let operation: @Sendable (UpstreamDemand) async -> Result<Int, UpstreamError> = { _ in
            runs.withLock { $0 += 1 }
            _ = try? await gate.get(path: "/gate", query: [])
            return .success(42)
        }
        async let first = flights.run("k", claim: .server, operation: operation)
        await gate.waitForCalls(1)
        async let second = flights.run("k", claim: .server, operation: operation)
        await waitUntil { flights.waiterCount(for: "k") == 2 }
        #expect(flights.inFlight == 1)
        gate.release()
        let results = await [first, second]
        #expect(results.map { try? $0.result.get() } == [42, 42])
        #expect(results.map(\.joined).sorted { !$0 && $1 } == [false, true])
        #expect(runs.withLock { $0 } == 1)
        #expect(flights.inFlight == 0)
        #expect(flights.waiterCount(for: "k") == 0)
    }

    @Test func aFailureIsSharedByEveryWaiterAndNotRemembered() async {
        let flights = SingleFlight<Int>()
        let gate = FakeUpstream([:])
        gate.hold()
        let failing: @Sendable (UpstreamDemand) async -> Result<Int, UpstreamError> = { _ in
            _ = try? await gate.get(path: "/gate", query: [])
            return .failure(.timeout)
        }
        async let first = flights.run("k", claim: .server, operation: failing)
        await gate.waitForCalls(1)
        async let second = flights.run("k", claim: .server, operation: failing)
        await waitUntil { flights.waiterCount(for: "k") == 2 }
        gate.release()
        #expect(await [first.result, second.result] == [.failure(.timeout), .failure(.timeout)])
        let later = await flights.run("k", claim: .server) { _ in .success(7) }
        #expect(later.result == .success(7))
        #expect(later.joined == false)
    }
}
