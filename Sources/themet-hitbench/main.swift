import Foundation
import MetCore
import MetDisk
import MetEngine
import MetFixtures
import MetGzip
import MetImaging

// themet-hitbench: the hit path measured in one process, without sockets: each request's head
// parsed, answered by the core from memory (or from the disk tier, read on the thread as a loop
// reads it), passed through the response layers, encoded as a loop
// writes it and counted, on one thread, with nothing else running. The steps a socket adds (a read
// and a writev per request, the loop's wake-ups) are left out, and with them wrk and the VM's
// scheduling: so a change of a few percent in the hit path's own CPU shows here, where
// `Benchmarks/run`'s wrk cases vary by ten or more. `Benchmarks/run` runs it (and, with --against, the baseline's, in turn).

let usage = """
    usage: themet-hitbench [--fixtures DIR] [--requests N] [--rounds N] [--json]

    Caches the bench's objects (the fixtures plus 100,000 synthetic records, served in-process), then
    times each case's requests answered at once, from memory or (the disk case) from the disk tier
    on the loop's thread: N per case per round (default 100,000), the
    cases in turn in each of the rounds (default 5), after one untimed round. Prints each case's least
    thread CPU time per request over the rounds (on a virtual machine, noise only adds to it: a
    neighbour's burst is counted as this thread's time), with the median and the most; --json prints
    one JSON object per case instead, with every round in order.
    """

var fixtures = "Fixtures"
var requests = 100_000
var rounds = 5
var json = false
var arguments = CommandLine.arguments.dropFirst()
while let flag = arguments.popFirst() {
    func value() -> String {
        guard let value = arguments.popFirst() else { exitForUsage("\(flag) needs a value") }
        return value
    }
    switch flag {
    case "--fixtures": fixtures = value()
    case "--requests": requests = positive(value(), flag)
    case "--rounds": rounds = positive(value(), flag)
    case "--json": json = true
    case "--help", "-h":
        print(usage)
        exit(0)
    default: exitForUsage("unknown flag \(flag)")
    }
}

func positive(_ text: String, _ flag: String) -> Int {
    guard let number = Int(text), number > 0 else { exitForUsage("\(flag) takes a positive whole number") }
    return number
}

func exitForUsage(_ message: String) -> Never {
    FileHandle.standardError.write(Data("themet-hitbench: \(message)\n\(usage)\n".utf8))
    exit(64)
}

/// The server's data directory, for this run only.
let dataDirectory = FileManager.default.temporaryDirectory.appendingPathComponent("themet-hitbench-\(getpid())").path

/// Removes the data directory and exits with `status` (`exit` runs no `defer`).
func finish(_ status: Int32) -> Never {
    try? FileManager.default.removeItem(atPath: dataDirectory)
    exit(status)
}

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("themet-hitbench: \(message)\n".utf8))
    finish(1)
}

/// The server's own set-up, as `themet serve` makes it, for the cases of `tier`, with the pacing out
/// of the way (the warm-up fetches some 25,000 records from the fixtures): a memory tier only, or
/// a disk tier under a memory tier of 1 MiB.
func makeService(for tier: HitCase.Tier, fixtures: String) throws -> MetService {
    let tiers =
        switch tier {
        case .memory: ["--disk-cache-size", "0", "--cache-size", "1GiB"]
        case .disk: ["--disk-cache-size", "1GiB", "--cache-size", "1MiB"]
        }
    let configuration = try ServerConfiguration.parse(
        arguments: tiers + [
            "--data-dir", dataDirectory + "/\(tier)", "--image-cache-size", "0", "--upstream-rate", "10000",
            "--upstream-burst", "1000", "--upstream-concurrency", "64",
        ],
        environment: [:], processorCount: 1)
    try configuration.prepareDataDirectory()
    let upstream = try FixtureDirectoryUpstream(directory: fixtures, syntheticCount: HitCase.syntheticRecords)
    let logger = Logger(level: .warning)
    let disk =
        configuration.cache.diskSize > 0
        ? DiskCache.open(
            directory: configuration.cache.dataDirectory, capacity: configuration.cache.diskSize, logger: logger)
        : nil
    let engine = CacheEngine(
        configuration: configuration, upstream: upstream, disk: disk, deriver: VipsDeriver(), time: SystemTime(),
        logger: logger, compress: { Gzip.compress($0) })
    return MetService(
        configuration: configuration, engine: engine, openAPI: OpenAPIDocument.bytes, compress: { Gzip.compress($0) })
}

let runners: [HitCase.Tier: HitPathRunner]
do {
    runners = try Dictionary(
        uniqueKeysWithValues: HitCase.Tier.allCases.map {
            ($0, HitPathRunner(service: try makeService(for: $0, fixtures: fixtures)))
        })
} catch {
    fail("\(error)")
}

Task {
    for hitCase in HitCase.all {
        if let problem = await runners[hitCase.tier]!.warm(hitCase) { fail(problem) }
    }
    var cpu: [String: [Double]] = [:]
    // One round untimed first: the first pass over a case runs up to half again slower (caches,
    // the branch predictor, the hit tables' first responses).
    for round in -1..<rounds {
        for hitCase in HitCase.all {
            do {
                let figure = try runners[hitCase.tier]!.time(hitCase, requests: requests)
                if round >= 0 { cpu[hitCase.name, default: []].append(figure) }
            } catch {
                fail("\(error)")
            }
        }
    }
    for hitCase in HitCase.all {
        let inOrder = cpu[hitCase.name, default: []]
        let figures = inOrder.sorted()
        if json {
            let rounds = inOrder.map { String(format: "%.1f", $0) }.joined(separator: ",")
            print(#"{"case":"\#(hitCase.name)","cpuNanosecondsPerRequest":[\#(rounds)]}"#)
        } else {
            let name = hitCase.name.padding(toLength: 20, withPad: " ", startingAt: 0)
            print(
                "\(name) \(String(format: "%7.0f", figures.first!)) ns/request CPU, least of \(figures.count) rounds "
                    + "(median \(String(format: "%.0f", figures[figures.count / 2])), "
                    + "most \(String(format: "%.0f", figures.last!)))")
        }
    }
    finish(0)
}
dispatchMain()
