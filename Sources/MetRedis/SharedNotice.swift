import MetEngine

/// What instances tell each other on the group's channel, as one line-separated payload; the key
/// goes last, so that whatever bytes it holds cannot be read as a field. A payload that is not one
/// of these (another version, another program on the channel) reads as nil and is ignored.
enum SharedNotice: Sendable, Equatable {
    /// The fill of `key` ended: `fill\n<outcome>\n<key>`.
    case fill(key: String, outcome: SharedFillOutcome)
    /// `key` was purged: `purge\n<key>`.
    case purge(key: String)
    /// `key`'s copies are to be marked expired: `expire\n<key>`.
    case expire(key: String)
    /// The firewall of one host blocks the group for a number of seconds from the notice's
    /// arrival: `pause\n<seconds>` for the API, `pause\n<seconds>\n<budget>` for another host.
    /// (Earlier versions sent `block\n<time>`, a time on the sender's clock; that notice is
    /// ignored.)
    case block(seconds: Double, budget: String)

    var payload: [UInt8] {
        switch self {
        case .fill(let key, let outcome): Array("fill\n\(Self.text(of: outcome))\n\(key)".utf8)
        case .purge(let key): Array("purge\n\(key)".utf8)
        case .expire(let key): Array("expire\n\(key)".utf8)
        case .block(let seconds, let budget):
            Array((budget.isEmpty ? "pause\n\(seconds)" : "pause\n\(seconds)\n\(budget)").utf8)
        }
    }

    init?(payload: [UInt8]) {
        let text = String(decoding: payload, as: UTF8.self)
        let fields = text.split(separator: "\n", maxSplits: 2, omittingEmptySubsequences: false)
        switch (fields.first, fields.count) {
        case ("fill", 3):
            guard let outcome = Self.outcome(fields[1]), !fields[2].isEmpty else { return nil }
            self = .fill(key: String(fields[2]), outcome: outcome)
        case ("purge", 2...):
            guard let key = Self.key(after: "purge\n", in: text) else { return nil }
            self = .purge(key: key)
        case ("expire", 2...):
            guard let key = Self.key(after: "expire\n", in: text) else { return nil }
            self = .expire(key: key)
        case ("pause", 2), ("pause", 3):
            guard let seconds = Double(fields[1]), seconds.isFinite, seconds > 0 else { return nil }
            let budget = fields.count == 3 ? String(fields[2]) : ""
            guard fields.count == 2 || !budget.isEmpty else { return nil }
            self = .block(seconds: seconds, budget: budget)
        default:
            return nil
        }
    }

    /// The key that fills the rest of a notice after its first line `word` (a key may hold line
    /// breaks); nil when it is empty.
    private static func key(after word: String, in text: String) -> String? {
        let key = text.dropFirst(word.count)
        return key.isEmpty ? nil : String(key)
    }

    /// One word, or `failed` and the error's kind; the reasons of `unreachable` and `malformed`
    /// stay in the fetching instance's log.
    private static func text(of outcome: SharedFillOutcome) -> String {
        switch outcome {
        case .stored: "stored"
        case .abandoned, .failed(.cancelled), .failed(.clientQueueFull): "abandoned"
        case .failed(.timeout): "failed timeout"
        case .failed(.blocked): "failed blocked"
        case .failed(.status(let code)): "failed status \(code)"
        case .failed(.unreachable): "failed unreachable"
        case .failed(.malformed): "failed malformed"
        }
    }

    private static func outcome(_ text: Substring) -> SharedFillOutcome? {
        switch text {
        case "stored": return .stored
        case "abandoned": return .abandoned
        case "failed timeout": return .failed(.timeout)
        case "failed blocked": return .failed(.blocked)
        case "failed unreachable": return .failed(.unreachable("the fetching instance could not reach the upstream"))
        case "failed malformed": return .failed(.malformed("the fetching instance got a malformed answer"))
        default:
            guard text.hasPrefix("failed status "), let code = Int(text.dropFirst("failed status ".count)),
                (100...599).contains(code)
            else { return nil }
            return .failed(.status(code))
        }
    }
}
