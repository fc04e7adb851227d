import MetEngine

/// A picture's size and the bounds its IIIF service states in `info.json`: no derivative is
/// larger than the picture itself (`maxWidth`, `maxHeight` and `maxArea` are its own), so `^`
/// enlarges a region up to the picture's full resolution and no further.
struct IIIFImageBounds: Sendable, Equatable {
    let width: Int
    let height: Int

    var maxWidth: Int { width }
    var maxHeight: Int { height }
    var maxArea: Int { width * height }
}

extension IIIFImageRequest.Parameters {
    /// What these parameters ask of a picture within `bounds`: the derivation to make, and its
    /// canonical parameters (`full` or `x,y,w,h`, `max` or `w,h` or `^w,h`, the rotation in whole
    /// degrees, the quality, the format), which key its cache entry. Follows the specification's
    /// §4.1–4.5: a region partly outside is cut at the picture's edge, one wholly outside is a
    /// 400, and so is a size larger than the region without `^`, or past the bounds with it.
    func plan(within bounds: IIIFImageBounds) throws(IIIFImageRequest.Failure) -> (
        derivation: ImageDerivation, canonical: String
    ) {
        let (x, y, regionWidth, regionHeight) = try regionPixels(bounds)
        let (width, height) = try scaledSize(regionWidth: regionWidth, regionHeight: regionHeight, bounds: bounds)
        let tone: ImageDerivation.Tone
        switch quality {
        case .default, .color: tone = .color
        case .gray: tone = .grey
        case .bitonal: tone = .bitonal
        }
        let derivation = ImageDerivation(
            x: x, y: y, regionWidth: regionWidth, regionHeight: regionHeight, width: width, height: height,
            mirrored: mirrored, quarters: quarters, tone: tone, encoding: format)
        let isFull = x == 0 && y == 0 && regionWidth == bounds.width && regionHeight == bounds.height
        let maxSize = Self.maxSize(regionWidth: regionWidth, regionHeight: regionHeight, bounds: bounds)
        // One string, appended to in place: this runs for every IIIF hit.
        var canonical = ""
        canonical.reserveCapacity(64)
        if isFull {
            canonical += "full/"
        } else {
            canonical += "\(x),\(y),\(regionWidth),\(regionHeight)/"
        }
        if (width, height) == maxSize {
            canonical += "max/"
        } else {
            if width > regionWidth || height > regionHeight { canonical += "^" }
            canonical += "\(width),\(height)/"
        }
        if mirrored { canonical += "!" }
        canonical += "\(quarters * 90)/\(quality.rawValue).\(Self.extension(format))"
        return (derivation, canonical)
    }

    /// The file extension the API names `encoding` by.
    static func `extension`(_ encoding: ImageDerivation.Encoding) -> String {
        switch encoding {
        case .jpeg: "jpg"
        case .png: "png"
        case .webp: "webp"
        }
    }

    private func regionPixels(_ bounds: IIIFImageBounds) throws(IIIFImageRequest.Failure) -> (Int, Int, Int, Int) {
        let (x, y, width, height): (Int, Int, Int, Int)
        switch region {
        case .full:
            return (0, 0, bounds.width, bounds.height)
        case .square:
            let side = min(bounds.width, bounds.height)
            return ((bounds.width - side) / 2, (bounds.height - side) / 2, side, side)
        case .pixels(let px, let py, let pw, let ph):
            (x, y, width, height) = (px, py, pw, ph)
        case .percent(let px, let py, let pw, let ph):
            func pixels(_ percent: Double, of side: Int) -> Int {
                Int(min(Double(Int32.max), (percent * Double(side) / 100).rounded()))
            }
            (x, y, width, height) = (
                pixels(px, of: bounds.width), pixels(py, of: bounds.height), pixels(pw, of: bounds.width),
                pixels(ph, of: bounds.height)
            )
        }
        guard x < bounds.width, y < bounds.height else {
            throw .invalid("The region starts outside the picture, which is \(bounds.width) × \(bounds.height) px.")
        }
        guard width > 0, height > 0 else { throw .invalid("The region holds no whole pixel of the picture.") }
        return (x, y, min(width, bounds.width - x), min(height, bounds.height - y))
    }

    private func scaledSize(
        regionWidth: Int, regionHeight: Int, bounds: IIIFImageBounds
    ) throws(IIIFImageRequest.Failure) -> (Int, Int) {
        let (rw, rh) = (Double(regionWidth), Double(regionHeight))
        func rounded(_ value: Double) -> Int { max(1, Int(min(Double(Int32.max), value.rounded()))) }
        let (width, height): (Int, Int)
        switch size.form {
        case .max:
            (width, height) =
                size.upscale
                ? Self.scaled(rw, rh, by: Self.largestScale(rw, rh, bounds))
                : Self.maxSize(regionWidth: regionWidth, regionHeight: regionHeight, bounds: bounds)
        case .width(let w):
            (width, height) = (w, rounded(rh * Double(w) / rw))
        case .height(let h):
            (width, height) = (rounded(rw * Double(h) / rh), h)
        case .percent(let percent):
            (width, height) = (rounded(rw * percent / 100), rounded(rh * percent / 100))
        case .exact(let w, let h):
            (width, height) = (w, h)
        case .confined(let w, let h):
            let scale = min(Double(w) / rw, Double(h) / rh, size.upscale ? Self.largestScale(rw, rh, bounds) : 1)
            (width, height) = (min(w, rounded(rw * scale)), min(h, rounded(rh * scale)))
        }
        if !size.upscale, width > regionWidth || height > regionHeight {
            throw .invalid(
                "\(width) × \(height) px is larger than the region (\(regionWidth) × \(regionHeight) px): "
                    + "a size that enlarges starts with ^.")
        }
        guard width <= bounds.maxWidth, height <= bounds.maxHeight, width * height <= bounds.maxArea else {
            throw .invalid(
                "\(width) × \(height) px is past this picture's bounds (maxWidth \(bounds.maxWidth), maxHeight "
                    + "\(bounds.maxHeight), maxArea \(bounds.maxArea)).")
        }
        return (width, height)
    }

    /// `max` without `^`: the region as it is, made smaller only as far as the bounds require.
    static func maxSize(regionWidth: Int, regionHeight: Int, bounds: IIIFImageBounds) -> (Int, Int) {
        let (rw, rh) = (Double(regionWidth), Double(regionHeight))
        return scaled(rw, rh, by: min(1, largestScale(rw, rh, bounds)))
    }

    /// The largest factor that keeps `rw` × `rh` within the bounds.
    private static func largestScale(_ rw: Double, _ rh: Double, _ bounds: IIIFImageBounds) -> Double {
        min(
            Double(bounds.maxWidth) / rw, Double(bounds.maxHeight) / rh,
            (Double(bounds.maxArea) / (rw * rh)).squareRoot())
    }

    /// `rw` × `rh` times `scale`, rounded down (so that the bounds hold), at least 1 × 1.
    private static func scaled(_ rw: Double, _ rh: Double, by scale: Double) -> (Int, Int) {
        guard scale < 1 || scale > 1 else { return (Int(rw), Int(rh)) }
        return (max(1, Int((rw * scale).rounded(.down))), max(1, Int((rh * scale).rounded(.down))))
    }
}
