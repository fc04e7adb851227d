import MetEngine

/// `GET /changes?since=&limit=`: the object records this server stored anew, changed or saw
/// withdrawn, in order (`ChangesHandler`). For any client, as the records themselves are.
enum ChangeRoutes {
    static let changes = RouteEntry(.exact(["/changes"]), label: .changes) { request, services throws(Problem) in
        try request.target.allowOnly(["since", "limit"])
        return services.changes.changes(from: try start(request.target), limit: try limit(request.target))
    }

    /// `since`: absent for the oldest change kept, `latest` for after the newest, or a cursor
    /// (`next` of an earlier page).
    private static func start(_ target: RequestTarget) throws(Problem) -> ChangeStart {
        guard let text = target.value(of: "since") else { return .oldest }
        if text == "latest" { return .latest }
        guard let cursor = ChangeCursor(text) else {
            throw Problem(
                .invalidParameter, "since must be a cursor from an earlier answer's next, or latest.",
                parameter: "since")
        }
        return .after(cursor)
    }

    /// `limit`: 1 to `ChangesHandler.maxLimit` changes a page, `defaultLimit` when absent.
    private static func limit(_ target: RequestTarget) throws(Problem) -> Int {
        guard let text = target.value(of: "limit") else { return ChangesHandler.defaultLimit }
        guard (1...4).contains(text.utf8.count), text.utf8.allSatisfy({ (0x30...0x39).contains($0) }),
            let limit = Int(text), (1...ChangesHandler.maxLimit).contains(limit)
        else {
            throw Problem(
                .invalidParameter, "limit must be a whole number from 1 to \(ChangesHandler.maxLimit).",
                parameter: "limit")
        }
        return limit
    }
}
