import MetEngine

/// `/health`, `/metrics` and `/openapi.yaml`: the server about itself.
enum ServiceRoutes {
    static let health = RouteEntry(.exact(["/health"]), label: .health) { _, services throws(Problem) in
        .ready(services.health.health())
    }

    /// Prometheus text.
    static let metrics = RouteEntry(.exact(["/metrics"]), label: .metrics) { _, services throws(Problem) in
        .ready(services.metrics.response())
    }

    static let openAPI = RouteEntry(.exact(["/openapi.yaml"]), label: .openapi) { request, services throws(Problem) in
        .ready(services.health.openAPI(request.presentation(), presenter: services.presenter))
    }
}
