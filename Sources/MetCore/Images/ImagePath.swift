import MetEngine

/// A path of the Met's image host, as `/images/{path}` takes it: only the shapes the host's
/// pictures have (docs/MET-API.md §7), `/CRDImages/{code}/{rendition}/{file}`:
/// - `code`, a department's image code: 2 to 8 lower-case letters (`ep`, `as`, `dp`, …);
/// - `rendition`: `original` or `web-large`;
/// - `file`: 1 to 200 letters, digits, `.`, `_` and `-`, not starting with `.`, ending in a
///   picture's extension (`jpg`, `jpeg`, `png`, `tif`, `tiff`, `webp`, in either case).
///
/// Anything else (another shape, `..`, a percent-encoded byte, a query) is refused before the
/// image host is asked. Pure; the parsed path is exactly what is asked of the host.
struct ImagePath: Sendable, Hashable {
    /// `/CRDImages/ep/web-large/DT1567.jpg`.
    let path: String

    static let renditions: Set<Substring> = ["original", "web-large"]
    static let extensions: Set<String> = ["jpg", "jpeg", "png", "tif", "tiff", "webp"]

    /// The image host's path that `rest` (what follows `/images/`, decoded) names.
    ///
    /// - Throws: `invalid_image_path`, saying which part is wrong.
    static func parse(_ rest: String) throws(Problem) -> ImagePath {
        let parts = rest.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 4, parts[0] == "CRDImages" else {
            throw invalid(rest, "expected CRDImages/{department code}/{original|web-large}/{file}")
        }
        let code = parts[1]
        guard (2...8).contains(code.utf8.count), code.utf8.allSatisfy({ (0x61...0x7A).contains($0) }) else {
            throw invalid(rest, "the department code must be 2 to 8 lower-case letters")
        }
        guard renditions.contains(parts[2]) else {
            throw invalid(rest, "the rendition must be original or web-large")
        }
        let file = parts[3]
        guard (1...200).contains(file.utf8.count), file.utf8.first != UInt8(ascii: "."),
            file.utf8.allSatisfy(isFileByte)
        else {
            throw invalid(rest, "the file name must be 1 to 200 letters, digits, '.', '_' or '-'")
        }
        guard let dot = file.lastIndex(of: "."), extensions.contains(file[file.index(after: dot)...].lowercased())
        else {
            throw invalid(rest, "the file must be a .jpg, .jpeg, .png, .tif, .tiff or .webp picture")
        }
        return ImagePath(path: "/" + rest)
    }

    /// The path of `url` when it is a picture of the Met's image host this server serves
    /// (`https://images.metmuseum.org/CRDImages/…` in one of the accepted shapes), else nil.
    static func onImageHost(_ url: String) -> ImagePath? {
        let host = IIIFManifest.imageHost
        guard url.hasPrefix(host) else { return nil }
        return try? parse(String(url.dropFirst(host.count)))
    }

    /// This server's URL of the same picture: `{base}/images/CRDImages/…`.
    func served(from base: String) -> String { base + "/images" + path }

    private static func isFileByte(_ byte: UInt8) -> Bool {
        switch byte {
        case 0x30...0x39, 0x41...0x5A, 0x61...0x7A, UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "-"): true
        default: false
        }
    }

    private static func invalid(_ rest: String, _ reason: String) -> Problem {
        Problem(.invalidImagePath, "/images/\(rest.prefix(200)) is not a path of the Met's image host: \(reason).")
    }
}
