import TestKit
import Testing

@testable import MetCore
@testable import MetEngine

@Suite("Upstream pacer: rate, in-flight limit, order, deadlines, cancellation")
struct UpstreamPacerTests {
    /// A deadline no test reaches.
    private static let far = 1e12

    /// Runs one call through `pacer` in a new task and reports how it ended: nil when its body ran,
    /// else the error. The body appends `label` to `log`.
    private func call(
        _ pacer: UpstreamPacer, _ label: Int, log: Locked<[Int]>, deadline: Double = far
    ) -> Task<UpstreamError?, Never> {
        Task {
            do throws(UpstreamError) {
                try await pacer.run(deadline: deadline) { log.withLock { $0.append(label) } }
                return nil
            } catch {
                return error
            }
        }
    }

    /// Waits until nothing moves without the clock: no call let through is still running, and the
    /// queue is empty or its wake-up sleeps on the clock.
    private func settle(_ pacer: UpstreamPacer, _ time: ManualTime) async {
        await waitUntil {
            let figures = pacer.figures
            return figures.inFlight == 0 && (figures.waiting == 0 || time.sleeping == 1)
        }
    }

    @Test func neverStartsMoreCallsThanTheRateAllows() async {
        let time = ManualTime()
        let start = time.now()
        let pacer = UpstreamPacer(ratePerSecond: 2, burst: 3, concurrency: 100, time: time)
        let starts = Locked<[Double]>([])
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<20 {
                group.addTask { try? await pacer.run(deadline: Self.far) { starts.withLock { $0.append(time.now()) } } }
            }
            await waitUntil { starts.withLock { $0.count } == 3 && pacer.figures.waiting == 17 }
            // 0.1 s steps: after each, no more calls have started than the burst plus the rate allows.
            for step in 1...100 {
                time.advance(by: 0.1)
                await settle(pacer, time)
                let started = starts.withLock { $0.count }
                #expect(Double(started) <= 3 + 2 * (Double(step) * 0.1) + 1e-6, "after \(step) steps")
            }
        }
        let times = starts.withLock { $0 }
        #expect(times.count == 20)
        // In every window between two starts, at most burst + rate × its length of them.
        for first in times.indices {
            for last in times.indices where last > first {
                #expect(Double(last - first + 1) <= 3 + 2 * (times[last] - times[first]) + 1e-6)
            }
        }
        #expect(times.prefix(3).allSatisfy { $0 == start })
        // And no slower: 17 more tokens at 0.5 s each; the 0.1 s steps add at most one step.
        #expect(times.last.map { $0 - start >= 8.5 - 1e-6 && $0 - start <= 8.6 + 1e-6 } == true)
    }

    @Test func neverHasMoreCallsInFlightThanItsConcurrency() async {
        let time = ManualTime()
        let pacer = UpstreamPacer(ratePerSecond: 1_000, burst: 100, concurrency: 2, time: time)
        let upstream = FakeUpstream([Sample.objectKey(1): .json(Sample.object(1))])
        upstream.hold()
        let active = Locked((now: 0, peak: 0))
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<5 {
                group.addTask {
                    _ = try? await pacer.run(deadline: Self.far) { () async throws(UpstreamError) -> UpstreamReply in
                        active.withLock { active in
                            active.now += 1
                            active.peak = max(active.peak, active.now)
                        }
                        defer { active.withLock { $0.now -= 1 } }
                        return try await upstream.get(path: MetResource.object(id: 1).path, query: [])
                    }
                }
            }
            await upstream.waitForCalls(2)
            await waitUntil { pacer.figures.waiting == 3 }
            #expect(upstream.calls.count == 2)
            #expect(pacer.figures.inFlight == 2)
            upstream.release()
        }
        #expect(upstream.calls.count == 5)
        #expect(active.withLock { $0.peak } == 2)
        #expect(
            pacer.figures
                == UpstreamPacer.Figures(ratePerSecond: 1_000, burst: 100, concurrency: 2, inFlight: 0, waiting: 0))
    }

    @Test func callsStartInTheOrderTheyArrived() async {
        let time = ManualTime()
        let pacer = UpstreamPacer(ratePerSecond: 1, burst: 1, concurrency: 10, time: time)
        let order = Locked<[Int]>([])
        #expect(await call(pacer, 0, log: order).value == nil)  // spends the only token
        var calls: [Task<UpstreamError?, Never>] = []
        for label in 1...5 {
            calls.append(call(pacer, label, log: order))
            await waitUntil { pacer.figures.waiting == label }
        }
        for step in 1...5 {
            time.advance(by: 1)
            await waitUntil { order.withLock { $0.count } == step + 1 }
            #expect(pacer.figures.waiting == 5 - step)
        }
        for call in calls { #expect(await call.value == nil) }
        #expect(order.withLock { $0 } == [0, 1, 2, 3, 4, 5])
    }

    @Test func aSlotFreedByOneCallGoesToTheFirstInLine() async {
        let time = ManualTime()
        let pacer = UpstreamPacer(ratePerSecond: 1_000, burst: 100, concurrency: 1, time: time)
        let upstream = FakeUpstream([Sample.objectKey(1): .json(Sample.object(1))])
        upstream.hold()
        let order = Locked<[Int]>([])
        let first = Task {
            try? await pacer.run(deadline: Self.far) { () async throws(UpstreamError) in
                _ = try await upstream.get(path: MetResource.object(id: 1).path, query: [])
            }
        }
        await upstream.waitForCalls(1)
        var queued: [Task<UpstreamError?, Never>] = []
        for label in 1...3 {
            queued.append(call(pacer, label, log: order))
            await waitUntil { pacer.figures.waiting == label }
        }
        upstream.release()
        await first.value
        for call in queued { #expect(await call.value == nil) }
        #expect(order.withLock { $0 } == [1, 2, 3])
    }

    @Test func aCallWhoseDeadlinePassesWhileWaitingTimesOutWithoutSpendingAToken() async {
        let time = ManualTime()
        let start = time.now()
        let pacer = UpstreamPacer(ratePerSecond: 1, burst: 1, concurrency: 10, time: time)
        let ran = Locked<[Int]>([])
        #expect(await call(pacer, 0, log: ran).value == nil)

        let late = call(pacer, 1, log: ran, deadline: start + 0.5)
        await waitUntil { pacer.figures.waiting == 1 }
        // The wake-up comes for the deadline, before the token. The pacer's sleeping task
        // registers with the clock on its own schedule (slower under TSan), so wait for it.
        await waitUntil { time.nextDeadline == start + 0.5 }
        let next = call(pacer, 2, log: ran)
        await waitUntil { pacer.figures.waiting == 2 }

        time.advance(by: 0.5)
        #expect(await late.value == .timeout)
        #expect(pacer.figures.waiting == 1)
        // The token due at start + 1 goes to the next in line, not to the call that left.
        time.advance(by: 0.5)
        #expect(await next.value == nil)
        #expect(ran.withLock { $0 } == [0, 2])
    }

    @Test func aDeadlineAlreadyPastTimesOutAtOnce() async {
        let time = ManualTime()
        let pacer = UpstreamPacer(ratePerSecond: 1, burst: 1, concurrency: 1, time: time)
        let ran = Locked<[Int]>([])
        #expect(await call(pacer, 1, log: ran, deadline: time.now()).value == .timeout)
        #expect(ran.withLock { $0 }.isEmpty)
        #expect(await call(pacer, 2, log: ran).value == nil)  // the token is still there
    }

    @Test func aCallCancelledWhileQueuedLeavesWithoutSpendingAToken() async {
        let time = ManualTime()
        let pacer = UpstreamPacer(ratePerSecond: 1, burst: 1, concurrency: 10, time: time)
        let ran = Locked<[Int]>([])
        #expect(await call(pacer, 0, log: ran).value == nil)

        let cancelled = call(pacer, 1, log: ran)
        await waitUntil { pacer.figures.waiting == 1 }
        let next = call(pacer, 2, log: ran)
        await waitUntil { pacer.figures.waiting == 2 }

        cancelled.cancel()
        #expect(await cancelled.value == .cancelled)
        #expect(pacer.figures.waiting == 1)
        // Had the cancelled call spent the token due in one second, the next would wait two.
        time.advance(by: 1)
        #expect(await next.value == nil)
        #expect(ran.withLock { $0 } == [0, 2])
        await waitUntil { time.sleeping == 0 }  // nothing left to wake up for
    }

    @Test func aCallCancelledBeforeItArrivesNeverQueues() async {
        let time = ManualTime()
        let pacer = UpstreamPacer(ratePerSecond: 1, burst: 1, concurrency: 1, time: time)
        let ran = Locked<[Int]>([])
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            do throws(UpstreamError) {
                try await pacer.run(deadline: Self.far) { ran.withLock { $0.append(1) } }
                return nil as UpstreamError?
            } catch {
                return error
            }
        }
        #expect(await task.value == .cancelled)
        #expect(ran.withLock { $0 }.isEmpty)
        #expect(await call(pacer, 2, log: ran).value == nil)  // the token is still there
    }

    @Test func failWaitingSendsTheQueueAwayButLeavesCallsInFlight() async {
        let time = ManualTime()
        let pacer = UpstreamPacer(ratePerSecond: 1_000, burst: 100, concurrency: 1, time: time)
        let upstream = FakeUpstream([Sample.objectKey(1): .json(Sample.object(1))])
        upstream.hold()
        let inFlight = Task {
            try? await pacer.run(deadline: Self.far) { () async throws(UpstreamError) in
                try await upstream.get(path: MetResource.object(id: 1).path, query: [])
            }
        }
        await upstream.waitForCalls(1)
        let ran = Locked<[Int]>([])
        let queued = [call(pacer, 1, log: ran), call(pacer, 2, log: ran)]
        await waitUntil { pacer.figures.waiting == 2 }

        pacer.failWaiting(with: .blocked)
        for call in queued { #expect(await call.value == .blocked) }
        #expect(pacer.figures.waiting == 0)
        #expect(pacer.figures.inFlight == 1)
        upstream.release()
        #expect(await inFlight.value?.status == 200)
        #expect(ran.withLock { $0 }.isEmpty)
        #expect(upstream.calls.count == 1)
    }

    @Test func aBodyThatThrowsFreesItsSlot() async {
        let time = ManualTime()
        let pacer = UpstreamPacer(ratePerSecond: 1_000, burst: 100, concurrency: 1, time: time)
        let thrown = await Task { () async -> UpstreamError? in
            do throws(UpstreamError) {
                try await pacer.run(deadline: Self.far) { () throws(UpstreamError) -> Void in throw .status(500) }
                return nil
            } catch {
                return error
            }
        }.value
        #expect(thrown == .status(500))
        #expect(pacer.figures.inFlight == 0)
        #expect(await call(pacer, 1, log: Locked([])).value == nil)
    }

    @Test func healthShowsThePacerAndTheCooldown() async throws {
        let upstream = FakeUpstream([
            Sample.objectKey(1): .json(Sample.object(1)), Sample.objectKey(2): .json(Sample.object(2)),
        ])
        upstream.hold()
        let harness = Harness(upstream: upstream) { configuration in
            configuration.upstream.rate = 1
            configuration.upstream.burst = 3
            configuration.upstream.concurrency = 1
            configuration.upstream.blockCooldown = 45
        }
        let first = Task { await harness.get("/objects/1") }
        await upstream.waitForCalls(1)
        let second = Task { await harness.get("/objects/2") }
        await waitUntil { harness.service.engine.pacer.figures.waiting == 1 }

        let document = try #require(harness.getImmediately("/health")).jsonObject()
        let state = try #require(document["upstream"] as? [String: Any])
        #expect(state["blockCooldownSeconds"] as? Double == 45)
        let pacer = try #require(state["pacer"] as? [String: Any])
        #expect(pacer["ratePerSecond"] as? Double == 1)
        #expect(pacer["burst"] as? Int == 3)
        #expect(pacer["concurrency"] as? Int == 1)
        #expect(pacer["inFlight"] as? Int == 1)
        #expect(pacer["waiting"] as? Int == 1)

        upstream.release()
        #expect(await first.value.status == 200)
        #expect(await second.value.status == 200)
        #expect(upstream.calls.count == 2)
    }
}
