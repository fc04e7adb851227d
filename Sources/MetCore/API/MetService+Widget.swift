extension MetService {
    /// The timeline of the shared store's records: answered at once, on any thread.
    func storeTimeline(_ widget: WidgetRequest, _ presentation: Presentation) -> Response {
        timelineResponse(widget, source: "store", items: store.records.map(\.summary), presentation)
    }

    /// The timeline of a search page built from fresh cache entries alone, or nil.
    func widgetImmediately(_ widget: WidgetRequest, _ presentation: Presentation) -> Response? {
        guard let query = widget.search, let page = hydratedPageImmediately(query) else { return nil }
        return timelineResponse(
            widget, source: "search", items: page.result.objects.compactMap(\.summary), presentation)
    }

    /// The timeline of a hydrated search (`q=` plus the search parameters).
    func widgetTimeline(_ widget: WidgetRequest, _ presentation: Presentation) async -> Response {
        guard let query = widget.search else { return storeTimeline(widget, presentation) }
        switch await hydratedPage(query) {
        case .success(let page):
            return timelineResponse(
                widget, source: "search", items: page.result.objects.compactMap(\.summary), presentation)
        case .failure(let error):
            return error.response
        }
    }

    /// The JSON timeline with its ETag; `no-cache`, so clients revalidate (and get a 304 while
    /// nothing changed). With no `start`, it starts at the current whole interval, so the bytes
    /// stay the same for a whole interval.
    private func timelineResponse(
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

extension CacheEntry {
    /// The summary of an object entry.
    var summary: ObjectSummary? {
        if case .object(let summary) = details { return summary }
        return nil
    }
}
