import MetEngine

/// One `/random` request: the ID list of its filter (a search's on the current generation of the
/// Met's search, switching once in `auto` mode as `/search` does; else a department's or the
/// collection's `/objects` list), plus the other pages of that search memory holds, then draws.
///
/// Each draw picks an ID uniformly from the list's IDs (each once), then needs its record: a
/// record that is a Met 404 or fails the filter (no image, not public domain) is set aside and
/// another ID drawn. Rejecting and drawing again keeps the choice uniform over the IDs that
/// qualify, and an ID is only ever answered with its record in hand, so never one known to 404.
/// A failed upstream call is answered as such, not drawn around (that would favour cached IDs).
struct RandomPipeline: Pipeline {
    private enum Stage {
        case start
        /// Waiting for the lists the filter reads first.
        case lists
        /// Looking at what memory holds of the search's other pages.
        case otherPages
        /// Waiting for the record of the drawn ID.
        case drawn(Int)
    }

    let request: RandomRequest
    let handler: RandomHandler
    private var stage = Stage.start
    /// The ID lists, and the generation of the Met's search they come from.
    private var reader: IDListReader
    /// The lists' entries, and those of the search's other pages memory holds.
    private var lists: [CacheEntry] = []
    private var candidates: [Int] = []
    private var rejected = Set<Int>()
    private var draws = 0
    private var fetchedDraws = 0
    private var outcome = CacheOutcome.hit

    init(request: RandomRequest, handler: RandomHandler) {
        self.request = request
        self.handler = handler
        reader = IDListReader(
            generations: handler.generations, presenter: handler.presenter, mayMove: request.search != nil)
    }

    /// The search's window on `api`, over the whole list (a sort by ID reads every page from the first).
    private var window: SearchWindow? {
        guard var query = request.search else { return nil }
        query.sort = .id
        return SearchWindow(query: query, api: reader.api)
    }

    mutating func advance(_ resolutions: [Resolution], at now: Double) -> Step {
        switch stage {
        case .start:
            return ask(window?.firstResources() ?? [request.objectList])
        case .lists:
            switch reader.read(resolutions) {
            case .read: break
            case .switched: return ask(window?.firstResources() ?? [])
            case .failure(let response): return .respond(response)
            }
            lists = reader.entries
            outcome = reader.outcome
            if let window, let total = lists.first.flatMap(Self.total) {
                let others = window.remainingResources(total: total)
                if !others.isEmpty {
                    stage = .otherPages
                    return .look(others)
                }
            }
            return start()
        case .otherPages:
            lists += resolutions.compactMap(\.entry)
            return start()
        case .drawn(let id):
            guard let resolution = resolutions.first else { return draw() }
            let entry: CacheEntry
            let how: CacheOutcome
            switch resolution {
            case .entry(let found, let foundHow):
                (entry, how) = (found, foundHow)
            case .failed(let error):
                return .respond(handler.presenter.problem(for: error, resource: .object(id: id)).response)
            case .cancelled:
                return .respond(Response(status: 499))
            case .pending:
                return .respond(handler.presenter.failure(.pending, of: .object(id: id)))
            }
            outcome = Presenter.combine(outcome, Presenter.shownInComposite(how))
            if entry.status == 200, let summary = entry.summary, request.accepts(summary) {
                var response = handler.response(
                    for: entry, id: id, drawnFrom: candidates.count, asJSON: request.asJSON)
                response.cacheOutcome = outcome
                return .respond(response)
            }
            rejected.insert(id)
            switch how {
            case .miss, .collapsed, .stale: fetchedDraws += 1  // the Met was asked
            case .hit, .diskHit, .sharedHit, .revalidating, .none: break
            }
            return draw()
        }
    }

    private mutating func ask(_ resources: [MetResource]) -> Step {
        stage = .lists
        return .need(reader.ask(resources))
    }

    /// The first draw, once every list is in.
    private mutating func start() -> Step {
        candidates = handler.candidates(in: lists)
        guard !candidates.isEmpty else {
            return .respond(
                Problem(.noMatch, "The Met lists no object for \(request.description), so there is nothing to draw.")
                    .response)
        }
        return draw()
    }

    /// The next ID to try, uniformly among the candidates not yet set aside; a 404 `no_match`
    /// once every candidate is set aside or a bound on draws is reached.
    private mutating func draw() -> Step {
        while draws < RandomHandler.maxDraws, fetchedDraws < RandomHandler.maxFetchedDraws,
            rejected.count < candidates.count
        {
            draws += 1
            let id = candidates[handler.random.index(below: candidates.count)]
            guard !rejected.contains(id) else { continue }
            stage = .drawn(id)
            return .need(Need([.object(id: id)]))
        }
        let what = [
            request.requiresImage ? "with an image" : nil, request.requiresPublicDomain ? "in the public domain" : nil,
        ].compactMap { $0 }.joined(separator: " and ")
        return .respond(
            Problem(
                .noMatch,
                "No object \(what.isEmpty ? "the Met could send" : what) turned up among \(rejected.count) drawn "
                    + "from the \(candidates.count) IDs known for \(request.description); ask again, or loosen the filter."
            ).response)
    }

    private static func total(_ entry: CacheEntry) -> Int? {
        guard case .ids(let list) = entry.details else { return nil }
        return list.total
    }
}
