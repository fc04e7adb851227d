import MetEngine

/// One `/objects?ids=…` request: the records, fetched as a search page's are (every missing one in
/// the background, waited for until the batch's `wait`), then `{objects, missing, pending}` with
/// the records in the order asked.
struct BatchPipeline: Pipeline {
    let batch: ObjectBatch
    let presentation: Presentation
    let presenter: Presenter
    /// Where complete bodies are kept (shared with search pages and timelines).
    let renders: Renders

    mutating func advance(_ resolutions: [Resolution], at now: Double) -> Step {
        guard !resolutions.isEmpty else { return .need(Need(batch.ids.map { .object(id: $0) }, wait: batch.wait)) }
        if let index = resolutions.firstIndex(where: \.isRefused) {
            return .respond(presenter.failure(resolutions[index], of: .object(id: batch.ids[index])))
        }
        var objects: [CacheEntry] = []
        var missing: [Int] = []
        var pending: [Int] = []
        var entries: [CacheEntry] = []
        var failure: (UpstreamError, MetResource)?
        var outcome = CacheOutcome.hit
        for (id, resolution) in zip(batch.ids, resolutions) {
            switch resolution {
            case .entry(let entry, let how):
                entries.append(entry)
                if entry.status == 404 { missing.append(id) } else { objects.append(entry) }
                outcome = Presenter.combine(outcome, Presenter.shownInComposite(how))
            case .failed(let error):
                failure = failure ?? (error, .object(id: id))
                pending.append(id)
                outcome = Presenter.combine(outcome, .miss)
            case .pending:
                pending.append(id)
                outcome = Presenter.combine(outcome, .miss)
            case .cancelled:
                return .respond(Response(status: 499))
            }
        }
        // Nothing to show and the Met failed: its failure says more than a list of pending IDs.
        if entries.isEmpty, let (error, resource) = failure {
            return .respond(presenter.problem(for: error, resource: resource).response)
        }
        var key = batch.renderKey
        for entry in entries { key += "|" + entry.etag }
        key += "|p" + pending.map(String.init).joined(separator: ",")
        let body = { [batch] in Self.body(objects: objects, missing: missing, pending: pending, fields: batch.fields) }
        return .respond(
            presenter.composite(
                key: key, complete: pending.isEmpty, bounds: entries, outcome: outcome, renders: renders,
                presentation, at: now, render: body
            ).response)
    }

    /// `{"objects": [records byte for byte, or their projection], "missing": [IDs], "pending": [IDs]}`.
    static func body(objects: [CacheEntry], missing: [Int], pending: [Int], fields: Set<String>?) -> [UInt8] {
        var json = JSONWriter(capacity: objects.reduce(256) { $0 + $1.body.count })
        json.beginObject()
        json.records("objects", objects, fields: fields)
        json.ids("missing", missing)
        json.ids("pending", pending)
        json.endObject()
        return json.bytes
    }
}
