import ImageHeaders
import MetEngine

/// `ImageDeriver` with libvips. A JPEG source is decoded at the smallest shrink-on-load (1/2,
/// 1/4, 1/8) that still holds the region at its requested size, so a thumbnail of a 4,000 px
/// original decodes an eighth of its pixels; then the region is cut, scaled to exactly the
/// requested size, mirrored, turned, toned and encoded. Blocks its thread; any thread.
public struct VipsDeriver: ImageDeriver {
    public init() {}

    public func derive(_ derivation: ImageDerivation, from source: [UInt8], width: Int, height: Int) throws -> [UInt8] {
        let shrink = Self.shrink(for: derivation, isJPEG: (try? ImageHeader.read(source).get())?.format == .jpeg)
        let decoded = try Picture.decode(source, shrink: shrink)
        // Shrink-on-load rounds the decoded size up; the region is scaled to it and kept within it.
        let across = Double(decoded.width) / Double(width)
        let down = Double(decoded.height) / Double(height)
        let x = min(decoded.width - 1, Int((Double(derivation.x) * across).rounded(.down)))
        let y = min(decoded.height - 1, Int((Double(derivation.y) * down).rounded(.down)))
        let regionWidth = max(1, min(decoded.width - x, Int((Double(derivation.regionWidth) * across).rounded())))
        let regionHeight = max(1, min(decoded.height - y, Int((Double(derivation.regionHeight) * down).rounded())))
        var picture = try decoded.displayable()
        if x != 0 || y != 0 || regionWidth != decoded.width || regionHeight != decoded.height {
            picture = try picture.cropped(x: x, y: y, width: regionWidth, height: regionHeight)
        }
        if derivation.width != regionWidth || derivation.height != regionHeight {
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
}
