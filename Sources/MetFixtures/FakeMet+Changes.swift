import Foundation
import MetCore
import MetEngine

/// Records changed while the fake runs, so that tests can see `metadataDate` sync work:
/// `POST /__change?ids=1,2,3` marks records changed now (not counted in `/__stats`, never
/// blocked). From then on each changed record answers with its `metadataDate` set to the time of
/// the change and its title ending in ` (revision N)`, and `/objects?metadataDate=D` lists it when
/// the change fell on or after day D. `POST /__change?ids=…&withdraw=true` withdraws records
/// instead: they answer 404 "Not a valid object", and are listed as changed the same way.
extension FakeMet {
    /// The control path that marks records changed.
    public static let changePath = "/__change"

    /// One record's changes so far.
    struct Change: Sendable {
        var revision: Int
        /// Seconds since 1970.
        var at: Double
        /// Withdrawn: the record answers 404.
        var withdrawn = false
    }

    static func isChange(_ request: Request) -> Bool {
        request.target == changePath || request.target.hasPrefix(changePath + "?")
    }

    /// `POST /__change?ids=…[&withdraw=true]`: marks each ID changed (or withdrawn) at `now`;
    /// answers `{"changed":[…]}`, or a 400 when `ids` is not a `,`-separated list of positive
    /// integers.
    func changeResponse(_ request: Request, at now: Double) -> Response {
        let target = try? RequestTarget(parsing: request.target)
        let text = target?.value(of: "ids") ?? ""
        let ids = text.split(separator: ",").compactMap { Int($0) }.filter { $0 > 0 }
        let withdraw = target?.value(of: "withdraw")
        guard request.method == "POST", !ids.isEmpty, ids.count == text.split(separator: ",").count,
            withdraw == nil || withdraw == "true"
        else {
            var json = JSONWriter()
            json.beginObject()
            json.member("message", string: "expected POST \(Self.changePath)?ids=1,2,3[&withdraw=true]")
            json.endObject()
            return Response(status: 400, headers: ["Content-Type": FixtureArchive.contentType], body: json.bytes)
        }
        changes.withLock { changes in
            for id in ids {
                changes[id] = Change(revision: (changes[id]?.revision ?? 0) + 1, at: now, withdrawn: withdraw != nil)
            }
        }
        var json = JSONWriter()
        json.beginObject()
        json.key("changed")
        json.beginArray()
        for id in ids { json.int(id) }
        json.endArray()
        json.endObject()
        return Response(status: 200, headers: ["Content-Type": FixtureArchive.contentType], body: json.bytes)
    }

    /// `reply` to `path` and `query` with the changes applied: a changed record's revised body (a
    /// withdrawn one's 404), or a `metadataDate` list with the records changed since that day.
    func revised(_ reply: UpstreamReply, path: String, query: [RequestTarget.QueryItem]) -> UpstreamReply {
        let known = changes.withLock { $0 }
        guard !known.isEmpty, reply.status == 200 else { return reply }
        let objects = MetResource.basePath + "/objects"
        if path.hasPrefix(objects + "/"), let id = Int(path.dropFirst(objects.count + 1)), known[id]?.withdrawn == true
        {
            return FixtureArchive.message(404, "Not a valid object")
        }
        if path.hasPrefix(objects + "/"), let id = Int(path.dropFirst(objects.count + 1)), let change = known[id],
            var record = (try? JSONSerialization.jsonObject(with: Data(reply.body))) as? [String: Any]
        {
            record["metadataDate"] = Self.timestamp(change.at)
            record["title"] = "\(record["title"] as? String ?? "") (revision \(change.revision))"
            guard let body = try? JSONSerialization.data(withJSONObject: record, options: [.sortedKeys]) else {
                return reply
            }
            return UpstreamReply(status: 200, contentType: reply.contentType, body: [UInt8](body))
        }
        if path == objects, let date = FixtureSearch.lastValue(of: "metadataDate", in: query),
            let since = FixtureArchive.day(date),
            let list = (try? JSONSerialization.jsonObject(with: Data(reply.body))) as? [String: Any]
        {
            let listed = (list["objectIDs"] as? [Int]) ?? []
            let changed = known.filter {
                (FixtureArchive.day(String(Self.timestamp($0.value.at).prefix(10))) ?? 0) >= since
            }
            let ids = Array(Set(listed).union(changed.keys)).sorted()
            var json = JSONWriter()
            json.beginObject()
            json.member("total", int: ids.count)
            json.key("objectIDs")
            json.beginArray()
            for id in ids { json.int(id) }
            json.endArray()
            json.endObject()
            return UpstreamReply(status: 200, contentType: reply.contentType, body: json.bytes)
        }
        return reply
    }

    /// ISO 8601 UTC with milliseconds, as the Met writes `metadataDate`.
    static func timestamp(_ seconds: Double) -> String {
        Date(timeIntervalSince1970: seconds).formatted(
            .iso8601.year().month().day().dateSeparator(.dash).time(includingFractionalSeconds: true)
                .timeSeparator(.colon))
            + "Z"
    }
}
