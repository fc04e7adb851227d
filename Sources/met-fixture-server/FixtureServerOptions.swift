import MetCore
import MetEngine
import MetFixtures

/// The command line of `met-fixture-server`.
struct FixtureServerOptions {
    /// Port on 127.0.0.1; 0 = any free port.
    var port = 0
    /// The fixture tree, laid out like the Met's paths.
    var fixtures = "Fixtures"
    /// Synthetic records for IDs 1…N that the fixtures lack.
    var synthetic = 0
    /// The fake's behaviour: latency, failures, firewall blocks.
    var fake = FakeMet.Options()

    static let usage = """
        usage: met-fixture-server [--port N] [--fixtures DIR] [--latency MS] [--fail-rate R]
                                  [--block-after N] [--block-seconds S] [--synthetic N] [--seed N]
                                  [--search-api both|v1|v1.1] [--image-max-age S]

          --port N           port on 127.0.0.1; 0 (default) picks a free one
          --fixtures DIR     fixture tree (default: Fixtures)
          --latency MS       delay before every answer, in milliseconds (default 0)
          --fail-rate R      fraction of requests answered 503, 0 to 1 (default 0)
          --block-after N    after N requests, answer a firewall-style 403 HTML page ...
          --block-seconds S  ... for S seconds (default 60), then count again
          --synthetic N      Met-shaped records for IDs 1…N that the fixtures lack
          --seed N           seed for --fail-rate's choices (default 1)
          --search-api G     search generations answered: both (default); v1 (v1.1 search
                             answers 404, as before 2026); v1.1 (v1 search answers 410, retired)
          --image-max-age S  the pictures' Cache-Control max-age, in seconds (default 432000,
                             the image host's)
        GET /__stats reports the requests received.
        """

    /// Parses `arguments` (`--flag value` or `--flag=value`); the error names the flag.
    static func parse(_ arguments: [String]) throws(ConfigurationError) -> FixtureServerOptions {
        var options = FixtureServerOptions()
        var remaining = arguments[...]
        while let argument = remaining.popFirst() {
            let parts = argument.split(separator: "=", maxSplits: 1).map(String.init)
            let flag = parts[0]
            guard let value = parts.count > 1 ? parts[1] : remaining.popFirst() else {
                throw ConfigurationError(flag: flag, reason: "needs a value")
            }
            func number(_ range: ClosedRange<Double>) throws(ConfigurationError) -> Double {
                guard let number = Double(value), range.contains(number) else {
                    throw ConfigurationError(
                        flag: flag,
                        reason: "expected a number from \(range.lowerBound) to \(range.upperBound), got '\(value)'")
                }
                return number
            }
            switch flag {
            case "--port": options.port = Int(try number(0...65_535))
            case "--fixtures": options.fixtures = value
            case "--latency": options.fake.latency = try number(0...600_000) / 1_000
            case "--fail-rate": options.fake.failRate = try number(0...1)
            case "--block-after": options.fake.blockAfter = Int(try number(1...1e9))
            case "--block-seconds": options.fake.blockSeconds = try number(0.001...86_400)
            case "--synthetic": options.synthetic = Int(try number(0...10_000_000))
            case "--seed": options.fake.seed = UInt64(try number(0...1e15))
            case "--image-max-age": options.fake.imageMaxAge = Int(try number(0...31_536_000))
            case "--search-api":
                guard let generations = FakeMet.SearchGenerations(rawValue: value) else {
                    throw ConfigurationError(flag: flag, reason: "expected both, v1 or v1.1, got '\(value)'")
                }
                options.fake.searchAPI = generations
            default: throw ConfigurationError(flag: flag, reason: "unknown flag; see --help")
            }
        }
        return options
    }
}
