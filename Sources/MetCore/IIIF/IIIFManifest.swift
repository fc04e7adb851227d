import MetEngine

/// A IIIF Presentation 3 manifest for one public-domain Met object
/// (https://iiif.io/api/presentation/3.0/): its label and metadata from the record, CC0 rights,
/// the Met as provider, its web page as homepage, and one canvas per image (the primary image,
/// then the additional ones), each painted with the Met's own image URL and, for a picture of the
/// image host, this server's IIIF Image API service for it (`/iiif/{id}/{n}`). The Met serves no IIIF of
/// its own; viewers such as Mirador and the Universal Viewer can show these.
///
/// The Met publishes no pixel sizes (its tracker's #25). A canvas takes the work's aspect ratio
/// from the record's `measurements` (the Met's photographs of flat works show the work), on a
/// coordinate space whose longer side is `canvasSide`, else a square; viewers fit the image
/// inside it, keeping the image's own aspect.
struct IIIFManifest {
    let record: IIIFRecord
    let id: Int
    /// The server's base URL, which every `id` in the manifest starts with (`http://host:port`).
    let base: String

    /// The media type of a Presentation 3 manifest.
    static let contentType = #"application/ld+json;profile="http://iiif.io/api/presentation/3/context.json""#
    /// The longer side of a canvas: the Met caps its originals at about 4,000 pixels.
    static let canvasSide = 4_000
    /// The manifest's format: part of its render key (and so of its ETag), and changed with what
    /// the manifest holds, so that a client does not keep one of an older build after a 304.
    static let format = 2
    /// What the Met's open-access images are released under.
    static let rights = "http://creativecommons.org/publicdomain/zero/1.0/"

    /// The images to paint, checked and rewritten as `MetWebPage` checks links (absolute http(s)
    /// URLs on metmuseum.org hosts; anything else a record holds is left out), each once: the
    /// primary image (or its web-large copy when only that is given), then the additional ones.
    var images: [String] {
        let primary = [record.primaryImage, record.primaryImageSmall].compactMap { $0 }.first { !$0.isEmpty }
        var seen = Set<String>()
        return ([primary].compactMap { $0 } + (record.additionalImages ?? []))
            .compactMap(MetWebPage.normalized)
            .filter { seen.insert($0).inserted }
    }

    var body: [UInt8] {
        let manifestID = "\(base)/iiif/\(id)/manifest.json"
        let label = [record.title, record.objectName].compactMap { $0 }.first { !$0.isEmpty } ?? "Object \(id)"
        var json = JSONWriter(capacity: 4_096)
        json.beginObject()
        json.member("@context", string: "http://iiif.io/api/presentation/3/context.json")
        json.member("id", string: manifestID)
        json.member("type", string: "Manifest")
        json.key("label")
        Self.language(label, to: &json)
        json.key("metadata")
        json.beginArray()
        for (name, value) in metadata { Self.pair(name, value, to: &json) }
        json.endArray()
        json.member("rights", string: Self.rights)
        if let credit = record.creditLine, !credit.isEmpty {
            json.key("requiredStatement")
            Self.pair("Credit line", "The Metropolitan Museum of Art, New York. \(credit)", to: &json)
        }
        json.key("provider")
        json.beginArray()
        json.beginObject()
        json.member("id", string: "https://www.metmuseum.org/")
        json.member("type", string: "Agent")
        json.key("label")
        Self.language("The Metropolitan Museum of Art", to: &json)
        json.key("homepage")
        json.beginArray()
        Self.link("https://www.metmuseum.org/", type: "Text", label: "The Met", format: "text/html", to: &json)
        json.endArray()
        json.endObject()
        json.endArray()
        if let page = record.objectURL.flatMap(MetWebPage.normalized) {
            json.key("homepage")
            json.beginArray()
            Self.link(page, type: "Text", label: label, format: "text/html", to: &json)
            json.endArray()
        }
        json.key("seeAlso")
        json.beginArray()
        Self.link(
            "\(base)/objects/\(id)", type: "Dataset", label: "The Met's record of this object",
            format: "application/json",
            to: &json)
        json.endArray()
        if let small = record.primaryImageSmall.flatMap(MetWebPage.normalized) {
            json.key("thumbnail")
            json.beginArray()
            Self.image(small, to: &json)
            json.endArray()
        }
        let images = images
        if images.count > 1 {
            json.key("behavior")
            json.beginArray()
            json.string("individuals")
            json.endArray()
        }
        json.key("items")
        json.beginArray()
        let (width, height) = canvasSize
        for (index, image) in images.enumerated() {
            let canvas = "\(base)/iiif/\(id)/canvas/\(index + 1)"
            json.beginObject()
            json.member("id", string: canvas)
            json.member("type", string: "Canvas")
            json.key("label")
            json.beginObject()
            json.key("none")
            json.beginArray()
            json.string(String(index + 1))
            json.endArray()
            json.endObject()
            json.member("width", int: width)
            json.member("height", int: height)
            json.key("items")
            json.beginArray()
            json.beginObject()
            json.member("id", string: canvas + "/page")
            json.member("type", string: "AnnotationPage")
            json.key("items")
            json.beginArray()
            json.beginObject()
            json.member("id", string: canvas + "/page/painting")
            json.member("type", string: "Annotation")
            json.member("motivation", string: "painting")
            json.key("body")
            // A picture of the image host has this server's IIIF Image API service for deep zoom.
            let service = image.hasPrefix(Self.imageHost) ? "\(base)/iiif/\(id)/\(index)" : nil
            Self.image(image, service: service, to: &json)
            json.member("target", string: canvas)
            json.endObject()
            json.endArray()
            json.endObject()
            json.endArray()
            json.endObject()
        }
        json.endArray()
        json.endObject()
        return json.bytes
    }

    /// Width and height of every canvas: the work's aspect ratio with the longer side
    /// `canvasSide`, or a square when the record does not give one.
    var canvasSize: (width: Int, height: Int) {
        let side = Double(Self.canvasSide)
        guard let ratio = record.aspectRatio else { return (Self.canvasSide, Self.canvasSide) }
        return ratio >= 1
            ? (Self.canvasSide, max(1, Int((side / ratio).rounded())))
            : (max(1, Int((side * ratio).rounded())), Self.canvasSide)
    }

    /// The record's descriptive members that have a value, as label and value.
    private var metadata: [(String, String)] {
        var artist = record.artistDisplayName ?? ""
        if !artist.isEmpty, let bio = record.artistDisplayBio, !bio.isEmpty { artist += " (\(bio))" }
        let rows: [(String, String?)] = [
            ("Artist", artist), ("Object type", record.objectName), ("Date", record.objectDate),
            ("Culture", record.culture), ("Period", record.period), ("Medium", record.medium),
            ("Dimensions", record.dimensions), ("Classification", record.classification),
            ("Department", record.department), ("Accession number", record.accessionNumber),
            ("Object ID", String(id)),
        ]
        return rows.compactMap { name, value in
            guard let value, !value.isEmpty else { return nil }
            return (name, value)
        }
    }

    /// A language map in English (the language of the Met's records).
    private static func language(_ text: String, to json: inout JSONWriter) {
        json.beginObject()
        json.key("en")
        json.beginArray()
        json.string(text)
        json.endArray()
        json.endObject()
    }

    /// `{"label": {"en": [name]}, "value": {"en": [value]}}`.
    private static func pair(_ name: String, _ value: String, to json: inout JSONWriter) {
        json.beginObject()
        json.key("label")
        language(name, to: &json)
        json.key("value")
        language(value, to: &json)
        json.endObject()
    }

    private static func link(_ id: String, type: String, label: String, format: String, to json: inout JSONWriter) {
        json.beginObject()
        json.member("id", string: id)
        json.member("type", string: type)
        json.key("label")
        language(label, to: &json)
        json.member("format", string: format)
        json.endObject()
    }

    /// Where the pictures a service is offered for live (`IIIFImageHandler` fetches from there only).
    static let imageHost = "https://images.metmuseum.org/"

    /// An image resource; its format read from the file name's extension (JPEG unless it says
    /// otherwise), with `service` as its level-2 IIIF Image API service when given.
    private static func image(_ url: String, service: String? = nil, to json: inout JSONWriter) {
        let name = url.lowercased()
        let format =
            name.hasSuffix(".png")
            ? "image/png"
            : name.hasSuffix(".gif")
                ? "image/gif"
                : name.hasSuffix(".tif") || name.hasSuffix(".tiff") ? "image/tiff" : "image/jpeg"
        json.beginObject()
        json.member("id", string: url)
        json.member("type", string: "Image")
        json.member("format", string: format)
        if let service {
            json.key("service")
            json.beginArray()
            json.beginObject()
            json.member("id", string: service)
            json.member("type", string: "ImageService3")
            json.member("profile", string: "level2")
            json.endObject()
            json.endArray()
        }
        json.endObject()
    }
}
