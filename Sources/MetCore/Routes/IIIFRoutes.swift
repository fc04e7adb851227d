import MetEngine

/// `/iiif/{id}/manifest.json`: an object's IIIF Presentation 3 manifest; `/iiif/{id}/{n}/…`: the
/// IIIF Image API over its pictures.
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

    /// `/iiif/{id}/{n}`, `/iiif/{id}/{n}/info.json` and
    /// `/iiif/{id}/{n}/{region}/{size}/{rotation}/{quality}.{format}` (`IIIFImageHandler`).
    static let image = RouteEntry(.rest(prefix: "/iiif/"), label: .iiifImage) { request, services throws(Problem) in
        try request.target.allowOnly([])
        do throws(IIIFImageRequest.Failure) {
            return services.iiifImages.answer(try IIIFImageRequest.parse(request.segment), for: request)
        } catch .notARoute {
            throw RouteTable.noRoute(request.target.path)
        } catch {
            return .ready(IIIFImageHandler.problem(error))
        }
    }
}
