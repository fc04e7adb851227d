import Foundation
import MetEngine

/// The home-screen widget's timeline: one entry per object, `interval` apart from `start`, each
/// linking to `themet://<id>` and `/open/<id>`, then a reload when the last entry is over. The
/// same inputs always give the same bytes, so ETags and 304s work.
struct WidgetTimeline {
    var family: WidgetFamily
    /// Seconds since 1970.
    var start: Double
    /// Seconds between entries.
    var interval: Double
    /// `store` or `search`.
    var source: String
    var items: [ObjectSummary]
    /// `--public-url`, or nil for relative `openURL`s and `imageURL`s.
    var publicURL: String?

    /// The JSON body: `family`, `source`, `start`, `interval`, `entries`, `placeholder` (an entry
    /// to show when there are none, else null) and `reload` (`{"policy": "atEnd", "date": …}`).
    var body: [UInt8] {
        var json = JSONWriter()
        json.beginObject()
        json.member("family", string: family.rawValue)
        json.member("source", string: source)
        json.member("start", string: Self.timestamp(start))
        json.member("interval", int: Int(interval))
        json.key("entries")
        json.beginArray()
        for (index, item) in items.enumerated() {
            write(item, at: start + Double(index) * interval, to: &json)
        }
        json.endArray()
        json.key("placeholder")
        if items.isEmpty {
            json.beginObject()
            json.member("date", string: Self.timestamp(start))
            json.member("title", string: "The Met")
            json.member("subtitle", string: "Search the collection to fill this widget.")
            json.key("imageURL")
            json.null()
            json.endObject()
        } else {
            json.null()
        }
        json.key("reload")
        json.beginObject()
        json.member("policy", string: "atEnd")
        json.member("date", string: Self.timestamp(start + Double(max(1, items.count)) * interval))
        json.endObject()
        json.endObject()
        return json.bytes
    }

    private func write(_ item: ObjectSummary, at date: Double, to json: inout JSONWriter) {
        json.beginObject()
        json.member("date", string: Self.timestamp(date))
        json.member("objectID", int: item.objectID)
        json.member("title", string: item.title ?? "")
        optional("artist", item.artistDisplayName, to: &json)
        let image = [item.primaryImageSmall, item.primaryImage].compactMap { $0 }.first { !$0.isEmpty }
        optional("imageURL", image.flatMap(ImagePath.onImageHost)?.served(from: publicURL ?? ""), to: &json)
        json.member("isPublicDomain", bool: item.isPublicDomain ?? false)
        json.member("widgetURL", string: DeepLink.url(for: item.objectID))
        json.member("openURL", string: (publicURL ?? "") + "/open/\(item.objectID)")
        if family == .large {
            optional("objectDate", item.objectDate, to: &json)
            optional("medium", item.medium, to: &json)
            optional("creditLine", item.creditLine, to: &json)
        }
        json.endObject()
    }

    /// `name`: the text, or null when it is missing or empty.
    private func optional(_ name: String, _ value: String?, to json: inout JSONWriter) {
        json.key(name)
        if let value, !value.isEmpty { json.string(value) } else { json.null() }
    }

    /// ISO 8601 UTC, whole seconds.
    static func timestamp(_ seconds: Double) -> String {
        Date(timeIntervalSince1970: seconds.rounded(.down)).formatted(.iso8601)
    }
}
