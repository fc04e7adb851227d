import MetEngine

/// `/random`: a random object of a search, a department or the collection (a 302, or JSON).
enum RandomRoutes {
    static let random = RouteEntry(.exact(["/random"]), label: .random) { request, services throws(Problem) in
        services.start(services.random.pipeline(try RandomRequest(request.target)), for: request)
    }
}
