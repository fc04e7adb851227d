import MetEngine

/// `GET /changes`: a page of the persistent tier's change log (`ObjectChange`), read in a task (a
/// few row lookups). Any thread.
///
/// The answer: `{"changes": [{"objectID", "change", "fetchedAt"}], "next", "more"}`, oldest
/// first; `next` is the cursor to ask with next time (also when the page is empty), `more` whether
/// further changes are already waiting. A record that changed twice is listed twice.
struct ChangesHandler: Sendable {
    let disk: (any PersistentTier)?
    let logger: Logger

    /// The page size when `limit` is not given, and the largest one asked for.
    static let defaultLimit = 100
    static let maxLimit = 1_000

    /// The page from `start` (200), or a problem: 404 `no_persistent_cache` without a tier (or a
    /// tier that keeps no log), 410 `cursor_expired` for a start the log no longer reaches, 500
    /// when the log cannot be read.
    func changes(from start: ChangeStart, limit: Int) -> Answer {
        guard let disk else { return .ready(Self.noLog.response) }
        return .suspended(
            Suspension { [logger] in
                let page: ChangePage?
                do {
                    page = try disk.changes(from: start, limit: limit)
                } catch {
                    logger.warning("changes: cannot read the change log: \(error)")
                    return Problem(.internalError, "The change log could not be read.").response
                }
                switch page {
                case nil:
                    return Self.noLog.response
                case .expired(let reason)?:
                    return Problem(
                        .cursorExpired,
                        "since cannot be continued: \(reason). Start again without since (and fetch again what "
                            + "you hold), or with since=latest to follow from now.",
                        parameter: "since"
                    ).response
                case .changes(let changes, let next, let more)?:
                    return Response(
                        status: 200,
                        headers: ["Content-Type": Response.jsonContentType, "Cache-Control": "no-store"],
                        body: Self.json(changes, next: next, more: more))
                }
            })
    }

    private static let noLog = Problem(
        .noPersistentCache,
        "This server keeps no persistent cache (--disk-cache-size 0, or its file could not be opened), "
            + "and so no change log.")

    /// The page's JSON document.
    static func json(_ changes: [ObjectChange], next: ChangeCursor, more: Bool) -> [UInt8] {
        var json = JSONWriter(capacity: 64 + changes.count * 80)
        json.beginObject()
        json.key("changes")
        json.beginArray()
        for change in changes {
            json.beginObject()
            json.member("objectID", int: change.objectID)
            json.member("change", string: change.kind.name)
            json.member("fetchedAt", string: WidgetTimeline.timestamp(change.fetchedAt))
            json.endObject()
        }
        json.endArray()
        json.member("next", string: next.description)
        json.member("more", bool: more)
        json.endObject()
        return json.bytes
    }
}
