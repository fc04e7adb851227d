import MetEngine

/// The files of the collection explorer at `/`: one page of HTML, CSS and JavaScript written for
/// this server and compiled into the binary (`Resources/explorer/`, embedded by SwiftPM), using
/// only the server's public routes. Nothing is fetched from another site, not even the Met's pictures.
public enum ExplorerAsset: String, Sendable, CaseIterable {
    case page = "/"
    case script = "/explorer.js"
    case style = "/explorer.css"
    case icon = "/favicon.svg"

    /// The path it is served at.
    public var path: String { rawValue }

    /// Its media type.
    var contentType: String {
        switch self {
        case .page: "text/html; charset=utf-8"
        case .script: "text/javascript; charset=utf-8"
        case .style: "text/css; charset=utf-8"
        case .icon: "image/svg+xml"
        }
    }

    /// Its bytes, as built.
    public var bytes: [UInt8] {
        switch self {
        case .page: PackageResources.index_html
        case .script: PackageResources.explorer_js
        case .style: PackageResources.explorer_css
        case .icon: PackageResources.favicon_svg
        }
    }
}
