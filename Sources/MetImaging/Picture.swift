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

    /// Lossy WebP at `quality` (1–100), metadata stripped.
    public func webp(quality: Int = 80) throws(VipsError) -> [UInt8] {
        try encode("webpsave_buffer") { cvips_webpsave_buffer(image, $0, $1, CInt(quality)) }
    }
}
