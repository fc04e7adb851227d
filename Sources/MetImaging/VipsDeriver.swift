import ImageHeaders
import MetEngine

/// `ImageDeriver` with libvips. Blocks its thread; any thread.
///
/// - From an original: a JPEG is decoded at the smallest shrink-on-load (1/2, 1/4, 1/8) that
///   still holds the region at its requested size, so a thumbnail of a 4,000 px original decodes
///   an eighth of its pixels; other formats decode whole.
/// - From a pyramid (`pyramid(of:width:height:)`: a tiled TIFF of halvings): the smallest level
///   that still holds the region at its requested size, and only the tiles the region touches.
///
/// Then the region is cut, scaled to exactly the requested size, mirrored, turned, toned and encoded.
public struct VipsDeriver: ImageDeriver {
    /// The side of a pyramid's own tiles, in px: a 512 px IIIF tile at its scale touches four.
    static let pyramidTile = 256

    public init() {}

    public func derive(_ derivation: ImageDerivation, from source: [UInt8], width: Int, height: Int) throws -> [UInt8] {
        let shrink = Self.shrink(for: derivation, isJPEG: (try? ImageHeader.read(source).get())?.format == .jpeg)
        let decoded = try Picture.decode(source, shrink: shrink)
        let region = Self.region(of: derivation, width: width, height: height, within: decoded.width, decoded.height)
        var picture = try decoded.displayable()
        if region != (0, 0, decoded.width, decoded.height) {
            picture = try picture.cropped(x: region.x, y: region.y, width: region.width, height: region.height)
        }
        return try Self.finish(picture, as: derivation)
    }

    public func pyramid(of source: [UInt8], width: Int, height: Int) throws -> [UInt8] {
        try Picture.decode(source).displayable().pyramid(side: Self.pyramidTile)
    }

    public func derive(
        _ derivation: ImageDerivation, fromPyramid pyramid: [UInt8], width: Int, height: Int
    ) throws -> [UInt8] {
        let top = try Picture.pageSize(of: pyramid, page: 0)
        var level = 0
        while level + 1 < top.pages, derivation.regionWidth >> (level + 1) >= derivation.width,
            derivation.regionHeight >> (level + 1) >= derivation.height
        {
            level += 1
        }
        let page = level == 0 ? top : try Picture.pageSize(of: pyramid, page: level)
        let region = Self.region(of: derivation, width: width, height: height, within: page.width, page.height)
        let picture = try Picture.decode(
            pyramid, page: level, x: region.x, y: region.y, width: region.width, height: region.height)
        return try Self.finish(picture, as: derivation)
    }

    /// The largest JPEG shrink-on-load factor (1, 2, 4 or 8) at which the region still has at least
    /// its requested pixels across and down; 1 for other formats.
    static func shrink(for derivation: ImageDerivation, isJPEG: Bool) -> Int {
        guard isJPEG else { return 1 }
        var shrink = 8
        while shrink > 1,
            derivation.regionWidth / shrink < derivation.width || derivation.regionHeight / shrink < derivation.height
        {
            shrink /= 2
        }
        return shrink
    }

    /// The derivation's region (in the pixels of a `width` × `height` source) in those of the same
    /// picture at `across` × `down` (decoded smaller, or a pyramid's level: rounded sizes), kept
    /// within it and never empty.
    static func region(
        of derivation: ImageDerivation, width: Int, height: Int, within across: Int, _ down: Int
    ) -> (x: Int, y: Int, width: Int, height: Int) {
        let scaleX = Double(across) / Double(width)
        let scaleY = Double(down) / Double(height)
        let x = min(across - 1, Int((Double(derivation.x) * scaleX).rounded(.down)))
        let y = min(down - 1, Int((Double(derivation.y) * scaleY).rounded(.down)))
        let regionWidth = max(1, min(across - x, Int((Double(derivation.regionWidth) * scaleX).rounded())))
        let regionHeight = max(1, min(down - y, Int((Double(derivation.regionHeight) * scaleY).rounded())))
        return (x, y, regionWidth, regionHeight)
    }

    /// `picture` (displayable: 8-bit sRGB or grey), the derivation's region, scaled to its size,
    /// mirrored, turned, toned and encoded.
    private static func finish(_ region: Picture, as derivation: ImageDerivation) throws -> [UInt8] {
        var picture = region
        if derivation.width != picture.width || derivation.height != picture.height {
            picture = try picture.resized(width: derivation.width, height: derivation.height)
        }
        guard picture.width == derivation.width, picture.height == derivation.height else {
            throw VipsError(
                operation: "resize",
                message: "made \(picture.width) × \(picture.height) px for \(derivation.width) × \(derivation.height)")
        }
        if derivation.mirrored { picture = try picture.mirrored() }
        picture = try picture.rotated(quarters: derivation.quarters)
        switch derivation.tone {
        case .color: break
        case .grey: picture = try picture.grey()
        case .bitonal: picture = try picture.grey().thresholded()
        }
        switch derivation.encoding {
        case .jpeg: return try picture.jpeg()
        case .png: return try picture.png()
        case .webp: return try picture.webp()
        }
    }
}
