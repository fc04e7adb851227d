/// A picture made from another: a region of the source, scaled to a size, mirrored and turned by
/// quarter turns, in colour, grey or black and white, encoded anew. What a IIIF image request
/// comes to once its parameters are read against the source's size; made by an `ImageDeriver`.
public struct ImageDerivation: Sendable, Hashable {
    /// What the pixels become.
    public enum Tone: Sendable, Hashable {
        case color
        case grey
        /// Black and white only.
        case bitonal
    }

    /// How the result is encoded.
    public enum Encoding: String, Sendable, Hashable {
        case jpeg
        case png
        case webp

        /// Its media type.
        public var contentType: String { "image/" + rawValue }
    }

    /// The region of the source, in its pixels: within its bounds, never empty.
    public var x: Int
    public var y: Int
    public var regionWidth: Int
    public var regionHeight: Int
    /// The region's size once scaled, before any turn: at least 1 × 1.
    public var width: Int
    public var height: Int
    /// Mirrored left for right, before turning.
    public var mirrored: Bool
    /// Quarter turns clockwise, 0 to 3.
    public var quarters: Int
    public var tone: Tone
    public var encoding: Encoding

    public init(
        x: Int, y: Int, regionWidth: Int, regionHeight: Int, width: Int, height: Int, mirrored: Bool, quarters: Int,
        tone: Tone, encoding: Encoding
    ) {
        self.x = x
        self.y = y
        self.regionWidth = regionWidth
        self.regionHeight = regionHeight
        self.width = width
        self.height = height
        self.mirrored = mirrored
        self.quarters = quarters
        self.tone = tone
        self.encoding = encoding
    }
}

/// Makes derivations (libvips in the server: `MetImaging.VipsDeriver`). Called off the loop
/// threads and off Swift's cooperative pool, one call per thread (`IIIF` handler's decode gate
/// bounds how many run); it blocks for as long as the work takes.
public protocol ImageDeriver: Sendable {
    /// `derivation` made from `source`, the bytes of a whole JPEG, PNG, WebP or TIFF file whose
    /// header said `width` × `height` pixels (already bounded by the caller).
    ///
    /// - Throws: when the file cannot be decoded or the result encoded; the message says why.
    func derive(_ derivation: ImageDerivation, from source: [UInt8], width: Int, height: Int) throws -> [UInt8]

    /// A pyramid of `source` (as for `derive(_:from:width:height:)`): the picture and its halvings
    /// in one file, tiled, so that a region of it is made without decoding the whole picture.
    /// Made once per picture, kept as the picture's derivatives are, and read back by
    /// `derive(_:fromPyramid:width:height:)`.
    ///
    /// - Throws: when the file cannot be decoded or the pyramid written.
    func pyramid(of source: [UInt8], width: Int, height: Int) throws -> [UInt8]

    /// `derivation` of the `width` × `height` picture whose pyramid is `pyramid`, decoding only
    /// the part of the fitting halving that the region covers.
    ///
    /// - Throws: when the pyramid cannot be read or the result encoded.
    func derive(_ derivation: ImageDerivation, fromPyramid pyramid: [UInt8], width: Int, height: Int) throws
        -> [UInt8]
}
