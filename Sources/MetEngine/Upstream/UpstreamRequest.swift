/// What one upstream fetch asks for and how its reply is judged: `MetResource` for the API's
/// records, `ImageResource` for the image host's pictures. `MetClient` runs the policy around it
/// (breaker, pacer, group budget, retries, deadline) the same way for both.
public protocol UpstreamRequest: Sendable {
    /// A usable answer: what a judged reply becomes.
    associatedtype Answer: Sendable

    /// The upstream path.
    var path: String { get }
    /// The upstream query, in the order it is sent.
    var query: [RequestTarget.QueryItem] { get }
    /// The validators of a copy held, for a conditional request; nil for none.
    var conditions: UpstreamValidators? { get }
    /// The key it is cached and logged under.
    var cacheKey: String { get }
    /// The kind of what it answers, for `/metrics`.
    var kind: ResourceKind { get }

    /// Classifies one reply. Pure: no I/O, no state. `.blocked` for the firewall's page.
    func judge(_ reply: UpstreamReply) -> Result<Answer, UpstreamError>

    /// How a usable answer is counted: `.ok`, or `.notFound` for a negative one.
    static func outcome(of answer: Answer) -> UpstreamOutcome

    /// The answer for the log: its status and size (`200, 1234 bytes`).
    static func logSummary(of answer: Answer) -> String
}

extension UpstreamRequest {
    public var conditions: UpstreamValidators? { nil }
}
