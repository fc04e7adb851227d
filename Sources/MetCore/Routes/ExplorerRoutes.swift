import MetEngine

/// `/` and the explorer's files: the page that browses the collection through this server.
enum ExplorerRoutes {
    static let files = RouteEntry(.exact(ExplorerAsset.allCases.map(\.rawValue)), label: .explorer) {
        request, services throws(Problem) in
        // A query is ignored: links to the page get tracking parameters (utm_…, fbclid) added.
        guard let asset = ExplorerAsset(rawValue: request.target.path) else {
            throw RouteTable.noRoute(request.target.path)
        }
        return .ready(services.explorer.response(asset, request.presentation(), presenter: services.presenter))
    }
}
