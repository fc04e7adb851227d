import MetEngine

/// A picture's IIIF image information (`info.json`, the Image API 3.0's §5): its size and bounds
/// (`IIIFImageBounds`: nothing larger than the picture), the sizes that are cheap to make
/// (halvings, which a JPEG decodes at a fraction of the work), and tiles of `tileSide` px at
/// every halving down to one tile, for deep zoom. Level 2, with mirroring, upscaling within the
/// bounds, and webp, gray and bitonal besides.
struct IIIFImageInfo {
    /// The service's base URI: `{base}/iiif/{objectID}/{n}`.
    let id: String
    let bounds: IIIFImageBounds

    /// The side of a tile, in pixels of the region it covers at its scale.
    static let tileSide = 512
    /// The smallest long side `sizes` lists.
    static let smallestSize = 64
    static let context = "http://iiif.io/api/image/3/context.json"

    /// The scale factors of the tiles: 1, 2, 4, … until one tile holds the whole picture.
    var scaleFactors: [Int] {
        var factors = [1]
        while max(bounds.width, bounds.height) > Self.tileSide * factors.last!, factors.count < 16 {
            factors.append(factors.last! * 2)
        }
        return factors
    }

    /// Halvings of the picture, smallest first, down to `smallestSize` on the long side.
    var sizes: [(width: Int, height: Int)] {
        var sizes: [(Int, Int)] = []
        var divisor = 1
        while max(bounds.width, bounds.height) / divisor >= Self.smallestSize, divisor <= 1 << 15 {
            sizes.append(((bounds.width + divisor - 1) / divisor, (bounds.height + divisor - 1) / divisor))
            divisor *= 2
        }
        return sizes.reversed()
    }

    var body: [UInt8] {
        var json = JSONWriter(capacity: 1_024)
        json.beginObject()
        json.member("@context", string: Self.context)
        json.member("id", string: id)
        json.member("type", string: "ImageService3")
        json.member("protocol", string: "http://iiif.io/api/image")
        json.member("profile", string: "level2")
        json.member("width", int: bounds.width)
        json.member("height", int: bounds.height)
        json.member("maxWidth", int: bounds.maxWidth)
        json.member("maxHeight", int: bounds.maxHeight)
        json.member("maxArea", int: bounds.maxArea)
        json.key("sizes")
        json.beginArray()
        for size in sizes {
            json.beginObject()
            json.member("width", int: size.width)
            json.member("height", int: size.height)
            json.endObject()
        }
        json.endArray()
        json.key("tiles")
        json.beginArray()
        json.beginObject()
        json.member("width", int: Self.tileSide)
        json.key("scaleFactors")
        json.beginArray()
        for factor in scaleFactors { json.int(factor) }
        json.endArray()
        json.endObject()
        json.endArray()
        for (name, values) in [
            ("extraFormats", ["webp"]), ("extraQualities", ["gray", "bitonal"]),
            ("extraFeatures", ["mirroring", "sizeUpscaling"]),
        ] {
            json.key(name)
            json.beginArray()
            for value in values { json.string(value) }
            json.endArray()
        }
        json.member("rights", string: IIIFManifest.rights)
        json.endObject()
        return json.bytes
    }

    /// The document for `request`: JSON-LD when its `Accept` asks for it, else JSON (§5.1), with
    /// the original's caching fields and a strong ETag of these bytes (a 304 when it matches).
    func response(for original: CacheEntry, to request: Request, at now: Double) -> Response {
        let body = body
        let etag = ETag.strong(for: body)
        var headers = HTTPFields(capacity: 6)
        let wantsLD = request.headers["Accept"]?.contains("application/ld+json") ?? false
        headers.append(
            "Content-Type", wantsLD ? "application/ld+json;profile=\"\(Self.context)\"" : "application/json")
        headers.append("Cache-Control", Presenter.cacheControl(original, at: now))
        headers.append("ETag", etag)
        headers.append("Link", "<http://iiif.io/api/image/3/level2.json>;rel=\"profile\"")
        headers.append("Vary", "Accept")
        if let tags = request.headers["If-None-Match"], ETag.ifNoneMatch(tags, matches: etag) {
            return Response(status: 304, headers: headers)
        }
        return Response(status: 200, headers: headers, body: body)
    }
}
