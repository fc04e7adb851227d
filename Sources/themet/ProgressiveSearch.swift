import Foundation
import MetCore
import MetEngine

/// A `/search` asked in steps, for a terminal: each step waits at most `step` for the objects
/// still pending and shows how many arrived, so a slow, paced upstream is never silence. The
/// steps do not touch the latest results (`store=false`); the last one asks as the user did.
struct ProgressiveSearch {
    /// The longest one step waits, in milliseconds.
    static let step = 1_000

    private let target: RequestTarget
    /// The user's `wait`, in milliseconds.
    private let wait: Int

    /// The search `target` asks for, or nil when it is no valid `/search` target (which is then
    /// asked as it is, and answered with its 400).
    init?(_ target: String) {
        guard let parsed = try? RequestTarget(parsing: target), parsed.path == "/search",
            let query = try? SearchQuery(parsed)
        else { return nil }
        self.target = parsed
        wait = Int((query.wait * 1_000).rounded())
    }

    /// Runs the steps until nothing is pending or the wait is spent, then the request as asked
    /// (which the cache then answers at once), or, with the wait spent, without waiting more.
    /// The progress line is cleared before the answer is printed.
    func run(_ service: MetService) async -> Response {
        let started = Date()
        var shown = false
        var spent = true
        while true {
            let left = wait - Int(Date().timeIntervalSince(started) * 1_000)
            guard left > 0 else { break }
            let response = await service.response(to: .get(stepTarget(wait: min(left, Self.step))))
            // A failure is the answer: asking again as the user did would only wait for it again.
            guard response.status == 200 else {
                if shown { Self.show("\r\u{1B}[2K") }
                return response
            }
            guard let counts = Self.counts(response.body), counts.pending > 0 else {
                spent = false
                break
            }
            let seconds = String(format: "%.1f", Date().timeIntervalSince(started))
            Self.show(
                "\r\u{1B}[2Kthemet: \(counts.arrived) of \(counts.arrived + counts.pending) objects, \(seconds) s")
            shown = true
        }
        if shown { Self.show("\r\u{1B}[2K") }
        let asAsked = PercentEncoding.target(path: target.path, query: target.query, keeping: [.comma, .pipe])
        return await service.response(to: .get(spent ? stepTarget(wait: 0, asAsked: true) : asAsked))
    }

    /// The target with `wait` replaced; not offered to the latest results unless `asAsked`.
    private func stepTarget(wait: Int, asAsked: Bool = false) -> String {
        var items = target.query.filter { $0.name != "wait" && (asAsked || $0.name != "store") }
        items.append(.init(name: "wait", value: String(wait)))
        if !asAsked { items.append(.init(name: "store", value: "false")) }
        return PercentEncoding.target(path: target.path, query: items, keeping: [.comma, .pipe])
    }

    /// Objects that arrived (with or without an image, or missing at the Met) and still pending.
    private static func counts(_ body: [UInt8]) -> (arrived: Int, pending: Int)? {
        guard let object = (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any],
            let pending = object["pending"] as? [Any]
        else { return nil }
        let arrived = ["objects", "missing", "withoutImage"].reduce(0) { $0 + ((object[$1] as? [Any])?.count ?? 0) }
        return (arrived, pending.count)
    }

    private static func show(_ text: String) {
        FileHandle.standardError.write(Data(text.utf8))
    }
}
