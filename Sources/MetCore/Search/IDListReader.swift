import MetEngine

/// Reads the ID lists a pipeline asked for (`SearchSteps`, `RandomPipeline`): keeps each list with
/// its entry and the least cached outcome among them, and when one fails, moves to the other
/// generation of the Met's search once (`auto` mode, see `SearchGenerations.switched`) or turns
/// the failure into its response.
struct IDListReader: Sendable {
    /// What reading the resolutions came to.
    enum Verdict {
        /// Every list asked for is in.
        case read
        /// The generation the reader moved to: what was read is dropped; ask that generation's lists.
        case switched(SearchAPI)
        /// The response to send instead (the failure's problem, or 499).
        case failure(Response)
    }

    let generations: SearchGenerations
    /// For a failure's response.
    let presenter: Presenter
    /// Whether a failure may move to the other generation: the lists are the Met's search's
    /// (not an `/objects` list).
    let mayMove: Bool
    /// The generation of the Met's search asked.
    private(set) var api: SearchAPI
    /// The list resources asked for last, in order.
    private var asked: [MetResource] = []
    /// The lists read, by resource.
    private(set) var lists: [MetResource: IDList] = [:]
    /// Their entries, in the order read.
    private(set) var entries: [CacheEntry] = []
    /// The least cached outcome among `entries` (see `Presenter.combine`).
    private(set) var outcome = CacheOutcome.hit
    /// Whether the generation has been switched already (once per request).
    private var moved = false

    init(generations: SearchGenerations, presenter: Presenter, mayMove: Bool) {
        self.generations = generations
        self.presenter = presenter
        self.mayMove = mayMove
        api = generations.current
    }

    /// The need for `resources`, remembered for `read`.
    mutating func ask(_ resources: [MetResource]) -> Need {
        asked = resources
        return Need(resources)
    }

    /// Takes the lists out of `resolutions` (of the need `ask` made last).
    mutating func read(_ resolutions: [Resolution]) -> Verdict {
        for (resource, resolution) in zip(asked, resolutions) {
            let error: UpstreamError
            switch resolution {
            case .entry(let entry, let how):
                guard case .ids(let list) = entry.details else {
                    error = .malformed("an answer without an ID list")
                    break
                }
                lists[resource] = list
                entries.append(entry)
                outcome = Presenter.combine(outcome, how)
                continue
            case .failed(let failure):
                error = failure
            case .cancelled:
                return .failure(Response(status: 499))
            case .pending:
                continue  // Only after a failure, which has returned already.
            }
            if mayMove, !moved, let other = generations.switched(from: api, after: error) {
                moved = true
                api = other
                lists = [:]
                entries = []
                outcome = .hit
                return .switched(other)
            }
            return .failure(presenter.problem(for: error, resource: resource).response)
        }
        return .read
    }
}
