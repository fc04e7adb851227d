import CVips

/// One libvips image: a reference to its `VipsImage`, released when the last holder goes. An image
/// is immutable once made; each operation makes a new one (libvips evaluates lazily, when an
/// encoder pulls the pixels). Any thread.
public final class Picture: @unchecked Sendable {
    // @unchecked: the VipsImage is never mutated after the operation that made it returns, and
    // libvips allows concurrent reads of one image from several threads.
    let image: OpaquePointer

    private init(_ image: OpaquePointer) {
        self.image = image
    }

    deinit {
        g_object_unref(UnsafeMutableRawPointer(image))
    }

    public var width: Int { Int(vips_image_get_width(image)) }
    public var height: Int { Int(vips_image_get_height(image)) }
    public var bands: Int { Int(vips_image_get_bands(image)) }

    /// Runs one libvips operation that makes an image, as a `Picture`.
    static func make(
        _ operation: String, _ call: (UnsafeMutablePointer<OpaquePointer?>) -> CInt
    ) throws(VipsError) -> Picture {
        guard Vips.start() else { throw VipsError(operation: "init", message: "libvips did not start") }
        var out: OpaquePointer?
        guard call(&out) == 0, let out else { throw Vips.lastError(operation) }
        return Picture(out)
    }

    /// Runs one libvips encoder and returns its bytes.
    func encode(
        _ operation: String,
        _ call: (UnsafeMutablePointer<UnsafeMutableRawPointer?>, UnsafeMutablePointer<Int>) -> CInt
    ) throws(VipsError) -> [UInt8] {
        var buffer: UnsafeMutableRawPointer?
        var length = 0
        guard call(&buffer, &length) == 0, let buffer else { throw Vips.lastError(operation) }
        defer { g_free(buffer) }
        return Array(UnsafeRawBufferPointer(start: buffer, count: length))
    }
}

// Making images from nothing: the fixture art.
extension Picture {
    /// A one-band float image of a sine wave, `hfreq` and `vfreq` cycles across and down
    /// (values −1…1).
    public static func sines(width: Int, height: Int, across: Double, down: Double) throws(VipsError) -> Picture {
        try make("sines") { cvips_sines($0, CInt(width), CInt(height), across, down) }
    }

    /// A one-band float image of Gaussian noise around 0, the same for the same `seed`.
    public static func noise(width: Int, height: Int, sigma: Double, seed: Int) throws(VipsError) -> Picture {
        try make("gaussnoise") {
            cvips_gaussnoise($0, CInt(width), CInt(height), sigma, CInt(truncatingIfNeeded: seed))
        }
    }

    /// `self * scale + offset`, per pixel.
    public func scaled(by scale: Double, plus offset: Double) throws(VipsError) -> Picture {
        try Self.make("linear") { cvips_linear1(image, $0, scale, offset) }
    }

    /// The pixel-wise sum of two images of one size.
    public func adding(_ other: Picture) throws(VipsError) -> Picture {
        try Self.make("add") { cvips_add(image, other.image, $0) }
    }

    /// The pixel-wise product of two images of one size.
    public func multiplying(_ other: Picture) throws(VipsError) -> Picture {
        try Self.make("multiply") { cvips_multiply(image, other.image, $0) }
    }

    /// This image resized to exactly `width` × `height` pixels (libvips's default kernel).
    public func resized(width: Int, height: Int) throws(VipsError) -> Picture {
        let across = Double(width) / Double(self.width)
        let down = Double(height) / Double(self.height)
        return try Self.make("resize") { cvips_resize(image, $0, across, down) }
    }

    /// Three one-band images as the bands of one 8-bit sRGB image (values clipped to 0…255).
    public static func rgb(_ red: Picture, _ green: Picture, _ blue: Picture) throws(VipsError) -> Picture {
        let joined = try make("bandjoin") { cvips_bandjoin3(red.image, green.image, blue.image, $0) }
        return try make("cast") { cvips_cast_uchar(joined.image, $0) }
    }
}

// Reading files and deriving pictures from them.
extension Picture {
    /// Decodes a JPEG, PNG, WebP or TIFF file into memory. A JPEG decodes at 1/`shrink` of its
    /// size (1, 2, 4 or 8: libvips's shrink-on-load, a fraction of the work); other formats ignore
    /// `shrink` and decode whole. The caller bounds the pixels first (`ImageHeader`): this
    /// allocates them all.
    public static func decode(_ bytes: [UInt8], shrink: Int = 1) throws(VipsError) -> Picture {
        guard Vips.start() else { throw VipsError(operation: "init", message: "libvips did not start") }
        let image = bytes.withUnsafeBytes { cvips_decode($0.baseAddress, $0.count, CInt(shrink)) }
        guard let image else { throw Vips.lastError("new_from_buffer") }
        return Picture(image)
    }

    /// The size of page `page` of a file (a pyramid's level, `pyramid(side:quality:)`) and its
    /// number of pages, read from its header alone.
    public static func pageSize(of bytes: [UInt8], page: Int) throws(VipsError) -> (
        width: Int, height: Int, pages: Int
    ) {
        guard Vips.start() else { throw VipsError(operation: "init", message: "libvips did not start") }
        var width: CInt = 0
        var height: CInt = 0
        var pages: CInt = 0
        let status = bytes.withUnsafeBytes {
            cvips_page_size($0.baseAddress, $0.count, CInt(page), &width, &height, &pages)
        }
        guard status == 0 else { throw Vips.lastError("new_from_buffer") }
        return (Int(width), Int(height), Int(pages))
    }

    /// The pixels of `x`, `y`, `width` × `height` (within the page) of page `page` of a file,
    /// decoded into memory. From a tiled file (a pyramid) only the tiles the region touches are read.
    public static func decode(
        _ bytes: [UInt8], page: Int, x: Int, y: Int, width: Int, height: Int
    ) throws(VipsError) -> Picture {
        guard Vips.start() else { throw VipsError(operation: "init", message: "libvips did not start") }
        let image = bytes.withUnsafeBytes {
            cvips_decode_region(
                $0.baseAddress, $0.count, CInt(page), CInt(x), CInt(y), CInt(width), CInt(height))
        }
        guard let image else { throw Vips.lastError("extract_area") }
        return Picture(image)
    }

    /// The pixels of `x`, `y`, `width` × `height`, which must lie within this image.
    public func cropped(x: Int, y: Int, width: Int, height: Int) throws(VipsError) -> Picture {
        try Self.make("extract_area") { cvips_extract_area(image, $0, CInt(x), CInt(y), CInt(width), CInt(height)) }
    }

    /// Turned clockwise by `quarters` quarter turns (any integer; 0 returns this image).
    public func rotated(quarters: Int) throws(VipsError) -> Picture {
        let turns = ((quarters % 4) + 4) % 4
        guard turns != 0 else { return self }
        return try Self.make("rot") { cvips_rot(image, $0, CInt(turns)) }
    }

    /// Mirrored left for right.
    public func mirrored() throws(VipsError) -> Picture {
        try Self.make("flip") { cvips_flip_horizontal(image, $0) }
    }

    /// 8-bit sRGB, or 8-bit grey when the image is grey: transparency flattened onto white, other
    /// colour spaces and depths converted. What every encoder here takes.
    public func displayable() throws(VipsError) -> Picture {
        try Self.make("colourspace") { cvips_to_srgb(image, $0) }
    }

    /// One band of 8-bit grey.
    public func grey() throws(VipsError) -> Picture {
        try Self.make("colourspace") { cvips_to_grey(image, $0) }
    }

    /// Black and white only: 255 where this one-band image is at least `threshold`, else 0.
    public func thresholded(at threshold: Double = 128) throws(VipsError) -> Picture {
        try Self.make("moreeq_const") { cvips_threshold(image, $0, threshold) }
    }
}

// Measuring.
extension Picture {
    /// The mean of every pixel of every band (0…255 for 8-bit images): what two renderings of one
    /// region are compared by.
    public func mean() throws(VipsError) -> Double {
        var mean = 0.0
        guard cvips_avg(image, &mean) == 0 else { throw Vips.lastError("avg") }
        return mean
    }
}

// Encoding.
extension Picture {
    /// Baseline JPEG at `quality` (1–100), metadata stripped.
    public func jpeg(quality: Int = 85) throws(VipsError) -> [UInt8] {
        try encode("jpegsave_buffer") { cvips_jpegsave_buffer(image, $0, $1, CInt(quality)) }
    }

    /// PNG, metadata stripped.
    public func png() throws(VipsError) -> [UInt8] {
        try encode("pngsave_buffer") { cvips_pngsave_buffer(image, $0, $1) }
    }

    /// A pyramid of this image, for deep zoom: a tiled TIFF whose page 0 is this image and each
    /// further page half the one before, down to one tile; tiles of `side` px, JPEG at `quality`.
    public func pyramid(side: Int, quality: Int = 90) throws(VipsError) -> [UInt8] {
        try encode("tiffsave_buffer") { cvips_pyramid_buffer(image, $0, $1, CInt(side), CInt(quality)) }
    }

    /// Lossy WebP at `quality` (1–100), metadata stripped.
    public func webp(quality: Int = 80) throws(VipsError) -> [UInt8] {
        try encode("webpsave_buffer") { cvips_webpsave_buffer(image, $0, $1, CInt(quality)) }
    }
}
