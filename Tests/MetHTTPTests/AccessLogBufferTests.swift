import EventLoops
import Foundation
import MetEngine
import TestKit
import Testing

@testable import MetHTTP

/// `AccessLogBuffer` on a real `EventLoop`, writing through an `AccessLog` to a temporary file:
/// lines are held until the buffer holds `capacityBytes` (then written in one go) or until the
/// `flushSeconds` timer fires; `flush()` writes what is held, and nothing when nothing is; lines
/// keep their order. Whatever must happen before the loop moves on is checked inside one loop job;
/// the timer is waited for with a bounded poll of the file.
@Suite("Access log buffering", .timeLimit(.minutes(2)))
struct AccessLogBufferTests {
    /// An `AccessLogBuffer` on a loop of its own, writing to a file in a temporary directory.
    /// The buffer is touched on the loop's thread only (`onLoop`). Call `shutDown()` once at the end.
    private final class BufferedLog: @unchecked Sendable {
        let loop: EventLoop
        private let directory = TemporaryDirectory("access-log-buffer")
        let path: String
        /// Only on the loop's thread (or before it starts).
        private let buffer: AccessLogBuffer

        init(format: LogFormat = .text) throws {
            path = directory.path + "/access.log"
            guard let log = try AccessLog.open(.file(path), format: format) else {
                throw ProcessFailure("no access log for a file")
            }
            loop = try EventLoop(name: "access-log-test")
            buffer = AccessLogBuffer(log: log, loop: loop)
            loop.start()
        }

        /// Runs `body` with the buffer on the loop's thread, as one job, and returns its result.
        func onLoop<T: Sendable>(_ body: @escaping @Sendable (AccessLogBuffer) -> T) async -> T {
            await awaitDelivery { deliver in loop.execute { [self] in deliver(body(buffer)) } }
        }

        /// The file's bytes so far, as text (access lines are ASCII: anything else is escaped).
        var written: String { Self.contents(of: path) }

        static func contents(of path: String) -> String {
            String(decoding: FileManager.default.contents(atPath: path) ?? Data(), as: UTF8.self)
        }

        /// Polls the file every 10 ms, at most `polls` times, until it holds at least `count` bytes.
        func waitForText(ofBytes count: Int, polls: Int = 500) async throws -> String {
            for _ in 0..<polls {
                let text = written
                if text.utf8.count >= count { return text }
                try await Task.sleep(for: .milliseconds(10))
            }
            return written
        }

        func shutDown() {
            loop.execute { [loop] in loop.stop() }
            loop.waitUntilStopped()
        }
    }

    /// The record of request `index`: its ID and target name it, so lines can be told apart.
    private static func record(_ index: Int, target: String? = nil) -> AccessRecord {
        AccessRecord(
            time: 1_750_000_000.25 + Double(index), client: "127.0.0.1", requestID: "request-\(index)",
            method: "GET", target: target ?? "/objects/\(index)", status: 200, bytes: 1_989, duration: 0.00104,
            cache: .hit, upstream: nil, userAgent: "curl/8.5.0")
    }

    /// The lines of `records` as `AccessLine` writes them, one after another.
    private static func lines(_ records: [AccessRecord], format: LogFormat = .text) -> String {
        var line = AccessLine(format: format)
        var bytes: [UInt8] = []
        for record in records { line.append(record, to: &bytes) }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The request IDs of the text lines in `text`, in order (the third field of each).
    private static func requestIDs(in text: String) -> [String] {
        text.split(separator: "\n").map { line in
            let fields = line.split(separator: " ")
            return fields.count > 2 ? String(fields[2]) : ""
        }
    }

    @Test func linesAreHeldUntilTheBufferReachesItsCapacityAndThenWrittenAtOnce() async throws {
        let log = try BufferedLog()
        defer { log.shutDown() }
        // Long targets, so that a few dozen lines fill the buffer.
        let target = "/search?q=" + String(repeating: "a", count: 1_000)
        let records = (0..<100).map { Self.record($0, target: target) }
        let expected = Self.lines(records)
        #expect(expected.utf8.count > AccessLogBuffer.capacityBytes)
        // All in one job: the flush timer cannot fire in between, so only the capacity writes.
        let (heldBefore, writtenAt, writtenThen) = await log.onLoop { [path = log.path] buffer in
            var held: [Int] = []
            for (index, record) in records.enumerated() {
                buffer.record(record)
                let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? -1
                if size != 0 {
                    return (held, index, BufferedLog.contents(of: path))
                }
                held.append(index)
            }
            return (held, -1, "")
        }
        // Nothing was written while the lines held came to less than the capacity...
        let crossing = Self.lines(Array(records[0...max(0, writtenAt)]))
        #expect(writtenAt >= 0)
        #expect(heldBefore == Array(0..<max(0, writtenAt)))
        #expect(Self.lines(Array(records[0..<max(0, writtenAt)])).utf8.count < AccessLogBuffer.capacityBytes)
        #expect(crossing.utf8.count >= AccessLogBuffer.capacityBytes)
        // ...then every line held, up to the one that filled the buffer, in one write, in order.
        #expect(writtenThen == crossing)
    }

    @Test func aLineIsWrittenWithinTheFlushIntervalWithoutAFlushCall() async throws {
        let log = try BufferedLog()
        defer { log.shutDown() }
        let record = Self.record(1)
        let writtenAtOnce = await log.onLoop { [path = log.path] buffer in
            buffer.record(record)
            return FileManager.default.contents(atPath: path)?.count ?? -1
        }
        // Held at first (the file exists, empty: the log opened it)...
        #expect(writtenAtOnce == 0)
        // ...then written by the loop's timer alone.
        let expected = Self.lines([record])
        #expect(try await log.waitForText(ofBytes: expected.utf8.count) == expected)
    }

    @Test func linesRecordedAfterATimedFlushAreWrittenByTheNextTimer() async throws {
        let log = try BufferedLog()
        defer { log.shutDown() }
        await log.onLoop { buffer in buffer.record(Self.record(1)) }
        let first = Self.lines([Self.record(1)])
        #expect(try await log.waitForText(ofBytes: first.utf8.count) == first)
        // The timer that fired is spent: a later line schedules one of its own.
        await log.onLoop { buffer in buffer.record(Self.record(2)) }
        let both = Self.lines([Self.record(1), Self.record(2)])
        #expect(try await log.waitForText(ofBytes: both.utf8.count) == both)
    }

    @Test func flushWritesTheLinesHeldOnceAndNothingWhenNoneAreHeld() async throws {
        let log = try BufferedLog()
        defer { log.shutDown() }
        let records = (1...3).map { Self.record($0) }
        let (empty, afterFlush, afterSecondFlush) = await log.onLoop { [path = log.path] buffer in
            buffer.flush()
            let empty = BufferedLog.contents(of: path)
            for record in records { buffer.record(record) }
            buffer.flush()
            let afterFlush = BufferedLog.contents(of: path)
            buffer.flush()
            return (empty, afterFlush, BufferedLog.contents(of: path))
        }
        #expect(empty.isEmpty)
        #expect(afterFlush == Self.lines(records))
        // The second flush found the buffer empty: nothing written twice, no stray newline.
        #expect(afterSecondFlush == afterFlush)
    }

    @Test func linesKeepTheirOrderAcrossCapacityTimerAndExplicitFlushes() async throws {
        let log = try BufferedLog()
        defer { log.shutDown() }
        let target = "/search?q=" + String(repeating: "o", count: 900)
        // Enough for one capacity write and some left over, then a timer's write, then a flush's.
        let first = (0..<60).map { Self.record($0, target: target) }
        let second = (60..<70).map { Self.record($0) }
        let third = (70..<75).map { Self.record($0) }
        await log.onLoop { buffer in for record in first { buffer.record(record) } }
        // The capacity write happened in that job; the rest goes with the timer.
        let firstLines = Self.lines(first)
        #expect(try await log.waitForText(ofBytes: firstLines.utf8.count) == firstLines)
        await log.onLoop { buffer in for record in second { buffer.record(record) } }
        let twoBatches = Self.lines(first + second)
        #expect(try await log.waitForText(ofBytes: twoBatches.utf8.count) == twoBatches)
        await log.onLoop { buffer in
            for record in third { buffer.record(record) }
            buffer.flush()
        }
        let all = log.written
        #expect(all == Self.lines(first + second + third))
        #expect(Self.requestIDs(in: all) == (0..<75).map { "request-\($0)" })
    }

    @Test func jsonLinesAreBufferedAsTextLinesAre() async throws {
        let log = try BufferedLog(format: .json)
        defer { log.shutDown() }
        let records = (1...2).map { Self.record($0) }
        let heldAtOnce = await log.onLoop { [path = log.path] buffer in
            for record in records { buffer.record(record) }
            return FileManager.default.contents(atPath: path)?.count ?? -1
        }
        #expect(heldAtOnce == 0)
        let expected = Self.lines(records, format: .json)
        let written = try await log.waitForText(ofBytes: expected.utf8.count)
        #expect(written == expected)
        #expect(written.hasPrefix("{\"time\":\"2025-06-15T"))
    }
}
