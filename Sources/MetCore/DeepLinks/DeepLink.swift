import Foundation
import MetEngine

/// The app's deep links, `themet://<objectID>`, and where they lead.
public enum DeepLink {
    /// The scheme the widget's links use.
    public static let scheme = "themet"

    /// The widget link for `id`.
    public static func url(for id: Int) -> String { "\(scheme)://\(id)" }

    /// The object ID in a deep link: exactly `themet://` followed by an object ID (digits, no
    /// sign, no leading zero, at most 2147483647). Anything else — another scheme, a host that
    /// is not a number, a path, a query, escapes, spaces or controls — throws `invalid_parameter`
    /// for `url`.
    public static func objectID(in url: String) throws(Problem) -> Int {
        let prefix = "\(scheme)://"
        guard url.utf8.count <= prefix.utf8.count + 10, url.lowercased().hasPrefix(prefix),
            let id = try? ObjectID.parse(String(url.dropFirst(prefix.count)))
        else {
            throw Problem(
                .invalidParameter, "url must be a deep link of the form themet://<objectID>, such as themet://436535.",
                parameter: "url")
        }
        return id
    }

    /// Where an object's deep link leads: the detail view for public-domain objects, the Met's web
    /// page for the rest. Nothing here comes from the client but the validated numeric `id`.
    ///
    /// - Parameters:
    ///   - detailTemplate: `--detail-url`, validated at start-up, containing `{id}`.
    ///   - objectURL: the record's `objectURL`, used (re-serialized) only when `MetWebPage` accepts
    ///     it: an absolute http(s) URL on `metmuseum.org` or a subdomain; otherwise the Met's
    ///     canonical page for the object.
    public static func target(
        id: Int, isPublicDomain: Bool, objectURL: String?, detailTemplate: String
    ) -> (kind: String, location: String) {
        if isPublicDomain {
            return ("detail", detailTemplate.replacingOccurrences(of: "{id}", with: String(id)))
        }
        if let objectURL, let page = MetWebPage.normalized(objectURL) { return ("web", page) }
        return ("web", "https://www.metmuseum.org/art/collection/search/\(id)")
    }
}
