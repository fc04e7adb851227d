import TestKit
import Testing

@testable import MetCore
@testable import MetEngine

@Suite("Deadline timer")
struct DeadlineTimerTests {
    /// Waits (without sleeping) until `time` has `count` sleepers.
    private func untilSleeping(_ count: Int, on time: ManualTime) async {
        while time.sleeping != count { await Task.yield() }
    }

    @Test func manyWaitsShareOneSleeperAndWakeInDeadlineOrder() async {
        let time = ManualTime()
        let timer = DeadlineTimer(time: time)
        let start = time.now()
        let late = Task { await timer.wait(until: start + 20) }
        await untilSleeping(1, on: time)
        let early = Task { await timer.wait(until: start + 5) }
        let alsoLate = Task { await timer.wait(until: start + 20) }
        // The earlier deadline replaces the sleeper; still one task sleeps for all three.
        while time.nextDeadline != start + 5 { await Task.yield() }
        #expect(time.sleeping == 1)
        time.advance(by: 5)
        #expect(await early.value)
        await untilSleeping(1, on: time)
        #expect(time.nextDeadline == start + 20)
        time.advance(by: 15)
        #expect(await late.value)
        #expect(await alsoLate.value)
        await untilSleeping(0, on: time)
    }

    @Test func aCancelledWaitEndsAtOnceAndTheLastOneStopsTheSleeper() async {
        let time = ManualTime()
        let timer = DeadlineTimer(time: time)
        let wait = Task { await timer.wait(until: time.now() + 30) }
        await untilSleeping(1, on: time)
        wait.cancel()
        #expect(await wait.value == false)
        #expect(time.sleeping == 0)
    }

    @Test func aDeadlineAlreadyPastReturnsAtOnce() async {
        let time = ManualTime()
        let timer = DeadlineTimer(time: time)
        #expect(await timer.wait(until: time.now()))
        #expect(time.sleeping == 0)
    }
}
