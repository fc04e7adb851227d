import MetEngine

/// `/widget/timeline`: a home-screen widget's timeline, of the shared store or of a search.
enum WidgetRoutes {
    static let timeline = RouteEntry(.exact(["/widget/timeline"]), label: .widget) {
        request, services throws(Problem) in
        var widget = try WidgetRequest(request.target)
        // A HEAD never replaces the latest results.
        if request.isHead { widget.search?.store = false }
        return services.widget.answer(
            widget, request.presentation(), driver: services.driver, claim: request.claim)
    }
}
