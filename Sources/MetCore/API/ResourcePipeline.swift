import MetEngine

/// Objects, departments and the Met-compatible mirror: one cache entry, presented for its route.
struct ResourcePipeline: Pipeline {
    let resource: MetResource
    let presentation: Presentation
    let presenter: Presenter

    mutating func advance(_ resolutions: [Resolution], at now: Double) -> Step {
        guard let resolution = resolutions.first else { return .need(Need([resource])) }
        return .respond(presenter.response(for: resolution, of: resource, presentation, at: now))
    }
}
