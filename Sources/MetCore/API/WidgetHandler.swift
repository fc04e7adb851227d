import Foundation

/// `/widget/timeline`: a timeline of the shared store's records, or of a hydrated search (`q=`
/// plus the search parameters). Any thread.
struct WidgetHandler: Sendable {
    let search: SearchHandler
    /// `--public-url`: makes the widget's links absolute.
    let publicURL: String?
    let time: any TimeSource

    /// The store's timeline at once; a search's through `driver`.
    func answer(_ widget: WidgetRequest, _ presentation: Presentation, driver: PipelineDriver) -> Answer {
        guard let query = widget.search else {
            return .ready(
                timeline(widget, source: "store", items: search.store.records.map(\.summary), presentation))
        }
        return driver.start(
            WidgetPipeline(
                steps: SearchSteps(query, handler: search), widget: widget, presentation: presentation, handler: self))
    }

    /// The JSON timeline with its ETag; `no-cache`, so clients revalidate (and get a 304 while
    /// nothing changed). With no `start`, it starts at the current whole interval, so the bytes
    /// stay the same for a whole interval.
    func timeline(
        _ widget: WidgetRequest, source: String, items: [ObjectSummary], _ presentation: Presentation
    ) -> Response {
        let start = widget.start ?? (time.now() / widget.interval).rounded(.down) * widget.interval
        let timeline = WidgetTimeline(
            family: widget.family, start: start, interval: widget.interval, source: source, items: items,
            publicURL: publicURL)
        let body = timeline.body
        let etag = ETag.strong(for: body)
        var headers: HTTPFields = ["Cache-Control": "no-cache", "ETag": etag]
        if let ifNoneMatch = presentation.ifNoneMatch, ETag.ifNoneMatch(ifNoneMatch, matches: etag) {
            return Response(status: 304, headers: headers)
        }
        headers.append("Content-Type", Response.jsonContentType)
        return Response(status: 200, headers: headers, body: body)
    }
}

/// One `/widget/timeline?q=…` request: the search's steps, then the timeline of its page.
struct WidgetPipeline: Pipeline {
    var steps: SearchSteps
    let widget: WidgetRequest
    let presentation: Presentation
    let handler: WidgetHandler

    mutating func advance(_ resolutions: [Resolution]) -> Step {
        switch steps.advance(resolutions) {
        case .need(let need): .need(need)
        case .failure(let response): .respond(response)
        case .page(let page):
            .respond(
                handler.timeline(
                    widget, source: "search", items: page.result.objects.compactMap(\.summary), presentation))
        }
    }
}
