import Foundation
import MetEngine

/// `/widget/timeline`: a timeline of the shared store's records, or of a hydrated search (`q=`
/// plus the search parameters). Any thread.
struct WidgetHandler: Sendable {
    let generations: SearchGenerations
    let presenter: Presenter
    /// The latest search results: a timeline without `q`, and offered a search's page.
    let store: SharedStore
    /// `--public-url`: makes the widget's links absolute.
    let publicURL: String?
    /// Rendered timelines, shared until their items change.
    let renders: Renders
    let time: any TimeSource

    /// The store's timeline at once; a search's through `driver`, for `claim`.
    func answer(
        _ widget: WidgetRequest, _ presentation: Presentation, driver: PipelineDriver, claim: UpstreamClaim
    ) -> Answer {
        guard let query = widget.search else {
            let (records, version) = store.versionedRecords
            return .ready(
                timeline(
                    widget, source: "store", of: "\(version)", items: records.map(\.summary), presentation,
                    at: time.now()))
        }
        return driver.start(
            WidgetPipeline(
                steps: SearchSteps(query, generations: generations, presenter: presenter), widget: widget,
                presentation: presentation, handler: self),
            claim: claim)
    }

    /// The JSON timeline with its ETag; `no-cache`, so clients revalidate (and get a 304 while
    /// nothing changed). With no `start`, it starts at the current whole interval, so the bytes
    /// stay the same for a whole interval. Rendered once per distinct timeline and kept
    /// (`RenderCache`); a plain request shares one response.
    ///
    /// - Parameter version: names the items' state: the store's version, or the ETags of the
    ///   search page's records.
    func timeline(
        _ widget: WidgetRequest, source: String, of version: String, items: [ObjectSummary],
        _ presentation: Presentation, at now: Double
    ) -> Response {
        let start = widget.start ?? (now / widget.interval).rounded(.down) * widget.interval
        let key = "widget|\(source)|\(widget.family.rawValue)|\(start)|\(widget.interval)|\(version)"
        let rendered = renders.rendered(key, gzip: false) {
            let body = WidgetTimeline(
                family: widget.family, start: start, interval: widget.interval, source: source, items: items,
                publicURL: publicURL
            ).body
            return (body, ETag.strong(for: body))
        }
        func make() -> Response {
            var headers: HTTPFields = ["Cache-Control": "no-cache", "ETag": rendered.etag]
            if let ifNoneMatch = presentation.ifNoneMatch, ETag.ifNoneMatch(ifNoneMatch, matches: rendered.etag) {
                return Response(status: 304, headers: headers)
            }
            headers.append("Content-Type", Response.jsonContentType)
            return Response(status: 200, headers: headers, body: rendered.body)
        }
        guard presentation.ifNoneMatch == nil else { return make() }
        // Nothing in the response depends on the clock: one shared response for as long as the render lives.
        return presenter.hitResponses.response(for: rendered.serial, second: 0, age: 0, ttl: 0, gzip: false, make: make)
    }
}

/// One `/widget/timeline?q=…` request: the search's steps, then the timeline of its page.
struct WidgetPipeline: Pipeline {
    var steps: SearchSteps
    let widget: WidgetRequest
    let presentation: Presentation
    let handler: WidgetHandler

    mutating func advance(_ resolutions: [Resolution], at now: Double) -> Step {
        switch steps.advance(resolutions) {
        case .need(let need): return .need(need)
        case .failure(let response): return .respond(response)
        case .page(let page):
            handler.store.offer(page.result, from: steps.query)
            return .respond(
                handler.timeline(
                    widget, source: "search", of: page.result.objects.map(\.etag).joined(separator: ","),
                    items: page.result.objects.compactMap(\.summary), presentation, at: now))
        }
    }
}
