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

    /// The image host's renditions and the pictures' extensions (compared in lower case).
    private static let renditions: [[UInt8]] = [Array("original".utf8), Array("web-large".utf8)]
    private static let extensions: [[UInt8]] = ["jpg", "jpeg", "png", "tif", "tiff", "webp"].map { Array($0.utf8) }
    private static let directory = Array("CRDImages".utf8)

    /// The image host's path that `rest` (what follows `/images/`, decoded) names.
    ///
    /// - Throws: `invalid_image_path`, saying which part is wrong.
    static func parse(_ rest: String) throws(Problem) -> ImagePath {
        var rest = rest
        if let reason = rest.withUTF8(refusal) {
            throw Problem(
                .invalidImagePath, "/images/\(rest.prefix(200)) is not a path of the Met's image host: \(reason).")
        }
        return ImagePath(path: "/" + rest)
    }

    /// Why `rest`'s bytes are not one of the accepted shapes, or nil when they are: one pass to
    /// find the slashes, then each part against its rule, in order. Runs for every picture request.
    private static func refusal(_ rest: UnsafeBufferPointer<UInt8>) -> String? {
        var slashes = (0, 0, 0)
        var count = 0
        for index in rest.indices where rest[index] == UInt8(ascii: "/") {
            count += 1
            switch count {
            case 1: slashes.0 = index
            case 2: slashes.1 = index
            case 3: slashes.2 = index
            default: break
            }
        }
        guard count == 3, rest[..<slashes.0].elementsEqual(directory) else {
            return "expected CRDImages/{department code}/{original|web-large}/{file}"
        }
        let code = rest[(slashes.0 + 1)..<slashes.1]
        guard (2...8).contains(code.count), code.allSatisfy({ (0x61...0x7A).contains($0) }) else {
            return "the department code must be 2 to 8 lower-case letters"
        }
        let rendition = rest[(slashes.1 + 1)..<slashes.2]
        guard renditions.contains(where: { $0.elementsEqual(rendition) }) else {
            return "the rendition must be original or web-large"
        }
        let file = rest[(slashes.2 + 1)...]
        guard (1...200).contains(file.count), file.first != UInt8(ascii: "."), file.allSatisfy(isFileByte) else {
            return "the file name must be 1 to 200 letters, digits, '.', '_' or '-'"
        }
        guard let dot = file.lastIndex(of: UInt8(ascii: ".")),
            extensions.contains(where: { $0.elementsEqual(file[(dot + 1)...].lazy.map(lowercased)) })
        else {
            return "the file must be a .jpg, .jpeg, .png, .tif, .tiff or .webp picture"
        }
        return nil
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

    /// An ASCII letter in lower case; any other byte as it is.
    private static func lowercased(_ byte: UInt8) -> UInt8 {
        (0x41...0x5A).contains(byte) ? byte | 0x20 : byte
    }
}
