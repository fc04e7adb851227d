import MetEngine

/// `/iiif/{id}/manifest.json`: an object's IIIF Presentation 3 manifest.
enum IIIFRoutes {
    static let manifest = RouteEntry(.segment(prefix: "/iiif/", suffix: "/manifest.json"), label: .iiif) {
        request, services throws(Problem) in
        try request.target.allowOnly([])
        let id = try ObjectID.parse(request.segment)
        let base = ManifestPipeline.base(
            publicURL: services.publicURL, scheme: request.forwarded?.forwardedProto ?? "http",
            host: request.request.headers["Host"])
        return services.start(
            ManifestPipeline(
                id: id, base: base, presentation: request.presentation(), presenter: services.presenter,
                renders: services.manifestRenders),
            for: request)
    }
}
