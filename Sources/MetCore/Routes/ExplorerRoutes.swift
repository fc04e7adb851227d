import MetEngine

/// `/` and the explorer's files: the page that browses the collection through this server.
enum ExplorerRoutes {
    static let files = RouteEntry(.exact(ExplorerAsset.allCases.map(\.rawValue)), label: .explorer) {
        request, services throws(Problem) in
        // A query is ignored: links to the page get tracking parameters (utm_…, fbclid) added.
        guard let asset = ExplorerAsset(rawValue: request.target.path) else {
            throw Problem(.routeNotFound, "There is no route \(request.target.path.prefix(200)); see /openapi.yaml.")
        }
        return .ready(services.explorer.response(asset, request.presentation(), presenter: services.presenter))
    }
}
