import TestKit
import Testing

@testable import MetCore
@testable import MetEngine

/// A `MetClient` on a fake upstream and a manual clock, with a retry policy whose jitter is fixed.
private struct RetryRig {
    let upstream = FakeUpstream()
    let time = ManualTime()
    let monitor = UpstreamMonitor(blockCooldown: 60)
    let log = MemoryLog()
    let client: MetClient
    let pacer: UpstreamPacer

    /// - Parameters:
    ///   - attempts: attempts in all.
    ///   - jitter: the fraction of each ceiling the pauses take (the policy's `random`).
    ///   - configure: changes to an unpaced configuration (timeouts, pacing).
    init(
        attempts: Int = 3, baseDelay: Double = 1, maxDelay: Double = 8, jitter: Double = 1,
        configure: (inout ServerConfiguration) -> Void = { _ in }
    ) {
        var configuration = ServerConfiguration()
        Harness.unpaced(&configuration)
        configure(&configuration)
        pacer = UpstreamPacer(
            ratePerSecond: configuration.upstream.rate, burst: configuration.upstream.burst,
            concurrency: configuration.upstream.concurrency, time: time)
        client = MetClient(
            upstream: upstream, monitor: monitor, pacer: pacer,
            retryPolicy: RetryPolicy(maxAttempts: attempts, baseDelay: baseDelay, maxDelay: maxDelay) { jitter },
            attemptTimeout: configuration.upstream.timeout, fetchTimeout: configuration.upstream.requestTimeout,
            time: time,
            logger: log.logger())
    }

    /// Upstream attempts the monitor has recorded.
    var recorded: Int { monitor.counts.reduce(0) { $0 + $1.1 } }

    /// Runs one fetch to its end, moving the clock to the end of each back-off as soon as the
    /// client sleeps in it. Returns the result and the pauses seen, in seconds.
    func fetchThroughBackoffs(
        _ resource: MetResource = .object(id: 1), deadline: Double? = nil
    ) async -> (result: Result<CacheableAnswer, UpstreamError>, pauses: [Double]) {
        let done = Locked<Result<CacheableAnswer, UpstreamError>?>(nil)
        let task = Task { [client] in
            let result = await client.fetch(resource, deadline: deadline)
            done.withLock { $0 = result }
        }
        var pauses: [Double] = []
        while true {
            // Once attempt n is recorded, its own timer is gone: a sleeper now is the back-off.
            let attempts = pauses.count + 1
            await waitUntil { done.withLock { $0 != nil } || (recorded == attempts && time.sleeping == 1) }
            if done.withLock({ $0 != nil }) { break }
            guard let wake = time.nextDeadline else { break }
            pauses.append(wake - time.now())
            time.advance(to: wake)
        }
        await task.value
        return (done.withLock { $0 } ?? .failure(.cancelled), pauses)
    }
}

/// A failure another attempt may cure, and the error the fetch ends with.
struct RetryableCase: Sendable, CustomTestStringConvertible {
    var name: String
    var answer: FakeUpstream.Answer
    var error: UpstreamError
    var testDescription: String { name }

    static let all: [RetryableCase] = [
        RetryableCase(name: "500", answer: .errorPage(500), error: .status(500)),
        RetryableCase(name: "502", answer: .errorPage(502), error: .status(502)),
        RetryableCase(name: "503", answer: .errorPage(503), error: .status(503)),
        RetryableCase(name: "504", answer: .errorPage(504), error: .status(504)),
        RetryableCase(
            name: "unreachable", answer: .failure(.unreachable("connection refused")),
            error: .unreachable("connection refused")),
        RetryableCase(name: "transport timeout", answer: .failure(.timeout), error: .timeout),
    ]

    /// Failures that are final at once.
    static let final: [RetryableCase] = [
        RetryableCase(name: "400", answer: .json(#"{"message":"bad"}"#, status: 400), error: .status(400)),
        RetryableCase(name: "403 JSON", answer: .json(#"{"message":"Forbidden"}"#, status: 403), error: .status(403)),
        RetryableCase(name: "403 block page", answer: .blockPage, error: .blocked),
        RetryableCase(name: "410", answer: .json(#"{"message":"gone"}"#, status: 410), error: .status(410)),
        RetryableCase(name: "429", answer: .json(#"{"message":"slow down"}"#, status: 429), error: .status(429)),
        RetryableCase(
            name: "200 malformed", answer: .json(#"{"title":"no id"}"#),
            error: .malformed("body is not the expected JSON (17 bytes)")),
        RetryableCase(name: "cancelled", answer: .failure(.cancelled), error: .cancelled),
    ]
}

@Suite("Retries: what, how often, how soon, and never past the deadline")
struct RetryTests {
    @Test(arguments: RetryableCase.all)
    func aFailureAnotherAttemptMayCureIsRetried(failure: RetryableCase) async {
        let rig = RetryRig(attempts: 3)
        rig.upstream.answer(.object(id: 1), with: failure.answer)
        let (result, pauses) = await rig.fetchThroughBackoffs()
        #expect(result == .failure(failure.error))
        #expect(rig.upstream.calls.count == 3)
        #expect(pauses == [1, 2])
        #expect(rig.recorded == 3)  // every attempt is counted
    }

    @Test(arguments: RetryableCase.final)
    func aFinalFailureIsNeverRetried(failure: RetryableCase) async {
        let rig = RetryRig(attempts: 3)
        rig.upstream.answer(.object(id: 1), with: failure.answer)
        let (result, pauses) = await rig.fetchThroughBackoffs()
        #expect(result == .failure(failure.error))
        #expect(rig.upstream.calls.count == 1)
        #expect(pauses.isEmpty)
    }

    @Test func aMet404ForAListIsNotRetried() async {
        let rig = RetryRig(attempts: 3)
        let list = MetResource.objectList(departmentIds: [], metadataDate: nil)
        rig.upstream.answer(list, with: .notFound())
        let (result, pauses) = await rig.fetchThroughBackoffs(list)
        #expect(result == .failure(.status(404)))
        #expect(rig.upstream.calls.count == 1)
        #expect(pauses.isEmpty)
    }

    @Test func aRetryThatSucceedsEndsTheFetch() async {
        let rig = RetryRig(attempts: 3)
        rig.upstream.answer(.object(id: 1), withEach: [.errorPage(503), .json(Sample.object(1))])
        let (result, pauses) = await rig.fetchThroughBackoffs()
        #expect(result == .success(storedObject1))
        #expect(rig.upstream.calls.count == 2)
        #expect(pauses == [1])
        let counts = Dictionary(uniqueKeysWithValues: rig.monitor.counts)
        #expect(counts[.serverError] == 1)
        #expect(counts[.ok] == 1)
    }

    @Test func pausesDoubleUpToTheMaximumDelay() async {
        let rig = RetryRig(attempts: 6, baseDelay: 0.5, maxDelay: 3)
        rig.upstream.answer(.object(id: 1), with: .errorPage(503))
        let (result, pauses) = await rig.fetchThroughBackoffs()
        #expect(result == .failure(.status(503)))
        #expect(rig.upstream.calls.count == 6)
        #expect(pauses == [0.5, 1, 2, 3, 3])
    }

    @Test func pausesAreJitteredBelowTheirCeiling() async {
        let rig = RetryRig(attempts: 3, baseDelay: 2, jitter: 0.25)
        rig.upstream.answer(.object(id: 1), with: .errorPage(500))
        let (_, pauses) = await rig.fetchThroughBackoffs()
        #expect(pauses == [0.5, 1])
    }

    @Test func theJitterIsDrawnWithinEachCeiling() {
        let draws = Locked<[Double]>([0, 0.5, 1, 7])  // 7 is out of range and is clamped to 1
        let policy = RetryPolicy(maxAttempts: 5, baseDelay: 1, maxDelay: 4) {
            draws.withLock { $0.removeFirst() }
        }
        #expect((1...4).map { policy.delay(beforeRetry: $0) } == [0, 1, 4, 4])
        #expect((1...5).map { policy.ceiling(beforeRetry: $0) } == [1, 2, 4, 4, 4])
    }

    @Test func noRetryStartsAtOrPastTheDeadline() async {
        let rig = RetryRig(attempts: 5)
        rig.upstream.answer(.object(id: 1), with: .errorPage(503))
        // Attempt 1 at 0 s, a 1 s pause, attempt 2 at 1 s; a 2 s pause would end at 3 s, past 2.5 s.
        let (result, pauses) = await rig.fetchThroughBackoffs(deadline: rig.time.now() + 2.5)
        #expect(result == .failure(.status(503)))
        #expect(rig.upstream.calls.count == 2)
        #expect(pauses == [1])
        #expect(rig.time.sleeping == 0)
    }

    @Test func anAttemptLongerThanTheUpstreamTimeoutIsCutAndRetried() async {
        let rig = RetryRig(attempts: 3) { $0.upstream.timeout = 5 }
        rig.upstream.answer(.object(id: 1), with: .json(Sample.object(1)))
        rig.upstream.hold()
        let fetch = Task { [client = rig.client] in await client.fetch(MetResource.object(id: 1)) }
        await rig.upstream.waitForCalls(1)
        rig.time.advance(by: 5)
        await rig.upstream.waitForCancellations(1)
        rig.upstream.release()
        await waitUntil { rig.recorded == 1 && rig.time.sleeping == 1 }
        rig.time.advance(by: 1)  // the first back-off
        #expect(await fetch.value == .success(storedObject1))
        #expect(rig.upstream.calls.count == 2)
        let counts = Dictionary(uniqueKeysWithValues: rig.monitor.counts)
        #expect(counts[.timeout] == 1)
        #expect(counts[.ok] == 1)
    }

    @Test func anAttemptStillRunningAtTheDeadlineEndsTheFetch() async {
        let rig = RetryRig(attempts: 3)
        rig.upstream.answer(.object(id: 1), with: .json(Sample.object(1)))
        rig.upstream.hold()
        let deadline = rig.time.now() + 3
        let fetch = Task { [client = rig.client] in await client.fetch(MetResource.object(id: 1), deadline: deadline) }
        await rig.upstream.waitForCalls(1)
        rig.time.advance(by: 3)
        #expect(await fetch.value == .failure(.timeout))
        #expect(rig.upstream.calls.count == 1)
        #expect(rig.upstream.cancellations.count == 1)
        #expect(rig.time.sleeping == 0)
    }

    @Test func aCancelledFetchIsNotRetried() async {
        let rig = RetryRig(attempts: 3)
        rig.upstream.answer(.object(id: 1), with: .json(Sample.object(1)))
        rig.upstream.hold()
        let fetch = Task { [client = rig.client] in await client.fetch(MetResource.object(id: 1)) }
        await rig.upstream.waitForCalls(1)
        fetch.cancel()
        #expect(await fetch.value == .failure(.cancelled))
        #expect(rig.upstream.calls.count == 1)
        #expect(rig.time.sleeping == 0)
    }

    @Test func aFetchCancelledDuringABackoffStops() async {
        let rig = RetryRig(attempts: 3)
        rig.upstream.answer(.object(id: 1), with: .errorPage(503))
        let fetch = Task { [client = rig.client] in await client.fetch(MetResource.object(id: 1)) }
        await waitUntil { rig.recorded == 1 && rig.time.sleeping == 1 }
        fetch.cancel()
        #expect(await fetch.value == .failure(.cancelled))
        #expect(rig.upstream.calls.count == 1)
    }

    @Test func aRetryWaitsForThePacer() async throws {
        // No pause of its own (jitter 0): only the pacer's one token a second spaces the attempts.
        let rig = RetryRig(attempts: 3, jitter: 0) { configuration in
            configuration.upstream.rate = 1
            configuration.upstream.burst = 1
        }
        rig.upstream.answer(.object(id: 1), with: .errorPage(503))
        let pacer = rig.pacer
        let fetch = Task { [client = rig.client] in await client.fetch(MetResource.object(id: 1)) }
        for attempt in 1...2 {
            await waitUntil { rig.upstream.calls.count == attempt && pacer.figures.waiting == 1 }
            #expect(rig.upstream.calls.count == attempt)
            rig.time.advance(by: 1)
        }
        #expect(await fetch.value == .failure(.status(503)))
        #expect(rig.upstream.calls.count == 3)
    }

    @Test func everyFailedAttemptIsLoggedAsAWarning() async {
        let rig = RetryRig(attempts: 2)
        rig.upstream.answer(.object(id: 1), with: .errorPage(502))
        _ = await rig.fetchThroughBackoffs()
        let warnings = rig.log.lines.filter { $0.hasPrefix("warning: ") }
        #expect(warnings.count == 2)
        #expect(warnings.first?.contains("HTTP 502 (attempt 1 of 2)") == true)
        #expect(warnings.last?.contains("HTTP 502 (attempt 2 of 2)") == true)
    }

    @Test func anOutageIsRecoveredByRetriesThroughTheService() async {
        let upstream = FakeUpstream()
        upstream.answer(
            .object(id: 1), withEach: [.errorPage(503), .failure(.unreachable("reset")), .json(Sample.object(1))])
        let harness = Harness(upstream: upstream) { $0.upstream.retries = 2 }
        let response = Task { await harness.get("/objects/1") }
        for attempt in 1...2 {
            // The service's policy draws its jitter at random: move to whatever the back-off is
            // (a draw too small for the clock to tell apart from now is no sleep at all).
            await waitUntil {
                upstream.calls.count > attempt
                    || (harness.service.engine.monitor.counts.reduce(0) { $0 + $1.1 } == attempt
                        && harness.time.sleeping == 1)
            }
            if upstream.calls.count == attempt, let wake = harness.time.nextDeadline { harness.time.advance(to: wake) }
        }
        #expect(await response.value.status == 200)
        #expect(upstream.calls.count == 3)
        #expect(harness.getImmediately("/objects/1")?.status == 200)  // stored
    }

    @Test func theRequestTimeoutBoundsPacingWaitsAndAttempts() async {
        let upstream = FakeUpstream([
            Sample.objectKey(1): .json(Sample.object(1)), Sample.objectKey(2): .json(Sample.object(2)),
        ])
        upstream.hold()
        let harness = Harness(upstream: upstream) { configuration in
            configuration.upstream.concurrency = 1
            configuration.upstream.requestTimeout = 5
            configuration.upstream.retries = 2
        }
        let first = Task { await harness.get("/objects/1") }
        await upstream.waitForCalls(1)
        let second = Task { await harness.get("/objects/2") }
        await waitUntil { harness.service.engine.pacer.figures.waiting == 1 }
        harness.time.advance(by: 5)
        let answers = [await first.value, await second.value]
        #expect(answers.map(\.status) == [504, 504])
        #expect(answers.map(\.problemCode) == ["upstream_timeout", "upstream_timeout"])
        #expect(upstream.calls == [Sample.objectKey(1)])  // the queued fetch never reached the upstream
    }
}

/// What a successful fetch of `Sample.object(1)` yields: its bytes and the summary read from them.
private let storedObject1 = CacheableAnswer(
    status: 200, body: Array(Sample.object(1).utf8),
    details: EntryDetails.read(Array(Sample.object(1).utf8), kind: .object))
