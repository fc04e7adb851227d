import Foundation

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
    ///   - objectURL: the record's `objectURL`, used only on `metmuseum.org` hosts over http(s).
    public static func target(
        id: Int, isPublicDomain: Bool, objectURL: String?, detailTemplate: String
    ) -> (kind: String, location: String) {
        if isPublicDomain {
            return ("detail", detailTemplate.replacingOccurrences(of: "{id}", with: String(id)))
        }
        if let objectURL, isMetWebPage(objectURL) { return ("web", objectURL) }
        return ("web", "https://www.metmuseum.org/art/collection/search/\(id)")
    }

    /// Whether `url` is an http(s) URL on `metmuseum.org` or one of its subdomains, made only of
    /// characters that are safe in a `Location` header.
    static func isMetWebPage(_ url: String) -> Bool {
        guard URLTemplates.isSafeTarget(url), !url.hasPrefix("/"), !url.contains("{"), !url.contains("}") else {
            return false
        }
        let afterScheme = url.drop { $0 != ":" }.dropFirst(3)
        let authority = afterScheme.prefix { $0 != "/" && $0 != "?" && $0 != "#" }.lowercased()
        let parts = authority.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
        let host = parts.first.map(String.init) ?? ""
        // A port, if any, is digits only: "metmuseum.org:evil.example" is not a Met page.
        guard parts.count == 1 || (parts[1].count <= 5 && !parts[1].isEmpty && parts[1].allSatisfy(\.isASCIIDigit))
        else { return false }
        return host == "metmuseum.org" || host.hasSuffix(".metmuseum.org")
    }
}
