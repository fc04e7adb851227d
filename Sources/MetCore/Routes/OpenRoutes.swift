import MetEngine

/// `/open/{id}` and `/open?url=themet://{id}`: where an object's deep link leads (a 302 to the
/// Met's page, or JSON with `format=json`).
enum OpenRoutes {
    private static let idParameters: Set<String> = ["format"]
    private static let linkParameters: Set<String> = ["url", "format"]

    static let byID = RouteEntry(.segment(prefix: "/open/"), label: .open) { request, services throws(Problem) in
        let asJSON = try request.target.redirectFormat(allowing: idParameters)
        return open(try ObjectID.parse(request.segment), asJSON: asJSON, request, services)
    }

    static let byLink = RouteEntry(.exact(["/open"]), label: .open) { request, services throws(Problem) in
        let asJSON = try request.target.redirectFormat(allowing: linkParameters)
        guard let url = request.target.value(of: "url") else {
            throw Problem(.invalidParameter, "url is required: a deep link such as themet://436535.", parameter: "url")
        }
        return open(try DeepLink.objectID(in: url), asJSON: asJSON, request, services)
    }

    private static func open(_ id: Int, asJSON: Bool, _ request: RouteRequest, _ services: RouteServices) -> Answer {
        services.start(
            OpenPipeline(id: id, asJSON: asJSON, detailURL: services.detailURL, presenter: services.presenter),
            for: request)
    }
}
