import MetEngine

/// `/images/{path}`: the Met's image host's pictures at its own paths, cached (`ImageHandler`).
enum ImageRoutes {
    static let file = RouteEntry(.rest(prefix: "/images/"), label: .images) { request, services throws(Problem) in
        try request.target.allowOnly([])
        return services.images.answer(try ImagePath.parse(request.segment), for: request)
    }
}
