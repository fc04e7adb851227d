import MetEngine

/// A request of the IIIF Image API 3.0 for one of an object's pictures
/// (https://iiif.io/api/image/3.0/, docs/IIIF-IMAGE.md): the path after `/iiif/`, either
/// `{objectID}/{n}` (the base URI), `{objectID}/{n}/info.json` or
/// `{objectID}/{n}/{region}/{size}/{rotation}/{quality}.{format}`,
/// `n` being 0 for the record's `primaryImage` and 1… for its `additionalImages`.
///
/// Parsing is strict and never traps: numbers are plain decimal digits (a bounded count of them,
/// a fraction only where the specification allows one), and anything else is a 400. A request the
/// grammar allows but this server does not do (a rotation that is not a quarter turn, a format
/// other than jpg, png and webp) is a 501. Whether the region and size fit the picture is decided
/// later, against its pixel size (`plan(width:height:)`).
struct IIIFImageRequest: Sendable, Equatable {
    let objectID: Int
    /// 0 for the primary image, 1… for the additional ones.
    let index: Int
    let operation: Operation

    enum Operation: Sendable, Equatable {
        /// `{objectID}/{n}` alone: the service's base URI, which redirects to its `info.json`.
        case base
        case info
        case image(Parameters)
    }

    struct Parameters: Sendable, Equatable {
        var region: Region
        var size: Size
        var mirrored: Bool
        /// Quarter turns clockwise, 0 to 3.
        var quarters: Int
        var quality: Quality
        var format: ImageDerivation.Encoding
    }

    enum Region: Sendable, Equatable {
        case full
        case square
        case pixels(x: Int, y: Int, width: Int, height: Int)
        /// Percentages of the picture's width and height.
        case percent(x: Double, y: Double, width: Double, height: Double)
    }

    struct Size: Sendable, Equatable {
        var form: Form
        /// `^`: the result may be larger than the region.
        var upscale: Bool

        enum Form: Sendable, Equatable {
            case max
            case width(Int)
            case height(Int)
            case percent(Double)
            case exact(width: Int, height: Int)
            /// `!w,h`: the largest that fits in `w` × `h`, keeping the aspect ratio.
            case confined(width: Int, height: Int)
        }
    }

    enum Quality: String, Sendable, Equatable {
        case `default`
        case color
        case gray
        case bitonal
    }

    /// What is wrong with a request: its status is the specification's.
    enum Failure: Error, Sendable, Equatable {
        /// 400: not the API's syntax, or a region or size this picture cannot give.
        case invalid(String)
        /// 501: the API's syntax, for a feature this server does not offer.
        case unsupported(String)
        /// 404 `image_not_found`: digits that name no picture (object 0, a leading zero, too large).
        case noSuchImage(String)
        /// 404 `route_not_found`: not the shape of any `/iiif/` path (a count of segments the API
        /// has no form for, an ID or picture number that is not digits, or a last segment that is
        /// not `info.json` where only the information would fit).
        case notARoute
    }

    /// The longest run of digits a number may have: nine fit an `Int` with room to multiply.
    static let maxDigits = 9

    /// The path's bytes, or a part of them.
    private typealias Bytes = Slice<UnsafeBufferPointer<UInt8>>

    /// Parses the path after `/iiif/` (`RouteRequest.segment`). Reads its UTF-8 bytes, never its
    /// characters: it runs for every tile a viewer asks for.
    static func parse(_ path: String) throws(Failure) -> IIIFImageRequest {
        var path = path
        // `withUTF8` rethrows untyped errors: the failure comes out of it as a value.
        return try path.withUTF8 { bytes in Result { () throws(Failure) in try parse(bytes[...]) } }.get()
    }

    private static func parse(_ path: Bytes) throws(Failure) -> IIIFImageRequest {
        let parts = path.split(separator: UInt8(ascii: "/"), maxSplits: 6, omittingEmptySubsequences: false)
        guard [2, 3, 6].contains(parts.count), parts.count != 3 || matches(parts[2], "info.json"),
            isDigits(parts[0]), isDigits(parts[1])
        else { throw .notARoute }
        guard let objectID = integer(parts[0], digits: 10), (1...Int(Int32.max)).contains(objectID) else {
            throw .noSuchImage(
                "There is no object \(quoted(parts[0])): IDs run from 1 to 2147483647, without leading zeros.")
        }
        guard let index = integer(parts[1]) else {
            throw .noSuchImage(
                "There is no picture \(quoted(parts[1])): pictures are numbered 0 (the primary image), 1, 2, … "
                    + "(the additional ones), without leading zeros.")
        }
        if parts.count == 2 { return IIIFImageRequest(objectID: objectID, index: index, operation: .base) }
        if parts.count == 3 { return IIIFImageRequest(objectID: objectID, index: index, operation: .info) }
        let region = try region(parts[2])
        let size = try size(parts[3])
        let (mirrored, quarters) = try rotation(parts[4])
        let (quality, format) = try qualityAndFormat(parts[5])
        return IIIFImageRequest(
            objectID: objectID, index: index,
            operation: .image(
                Parameters(
                    region: region, size: size, mirrored: mirrored, quarters: quarters, quality: quality,
                    format: format)))
    }

    private static func region(_ text: Bytes) throws(Failure) -> Region {
        if matches(text, "full") { return .full }
        if matches(text, "square") { return .square }
        // Made only when thrown: the message is work a valid request should not pay for.
        let invalid = {
            Failure.invalid("The region must be full, square, x,y,w,h or pct:x,y,w,h, not \(quoted(text)).")
        }
        if hasPrefix(text, "pct:") {
            let numbers = text.dropFirst(4).split(separator: comma, omittingEmptySubsequences: false).map(decimal)
            guard numbers.count == 4, let x = numbers[0], let y = numbers[1], let w = numbers[2], let h = numbers[3]
            else { throw invalid() }
            guard w > 0, h > 0 else { throw .invalid("The region's width and height must be more than 0%.") }
            return .percent(x: x, y: y, width: w, height: h)
        }
        let numbers = text.split(separator: comma, omittingEmptySubsequences: false).map { integer($0) }
        guard numbers.count == 4, let x = numbers[0], let y = numbers[1], let w = numbers[2], let h = numbers[3]
        else { throw invalid() }
        guard w > 0, h > 0 else { throw .invalid("The region's width and height must be at least 1 pixel.") }
        return .pixels(x: x, y: y, width: w, height: h)
    }

    private static func size(_ text: Bytes) throws(Failure) -> Size {
        let upscale = text.first == UInt8(ascii: "^")
        let body = upscale ? text.dropFirst() : text
        let invalid = {
            Failure.invalid(
                "The size must be max, w,, ,h, pct:n, w,h or !w,h, each with an optional ^, not \(quoted(text)).")
        }
        if matches(body, "max") { return Size(form: .max, upscale: upscale) }
        if hasPrefix(body, "pct:") {
            guard let percent = decimal(body.dropFirst(4)) else { throw invalid() }
            guard percent > 0 else { throw .invalid("The size's percentage must be more than 0.") }
            return Size(form: .percent(percent), upscale: upscale)
        }
        let confined = body.first == UInt8(ascii: "!")
        let pair = (confined ? body.dropFirst() : body).split(separator: comma, omittingEmptySubsequences: false)
        guard pair.count == 2 else { throw invalid() }
        let (width, height) = (integer(pair[0]), integer(pair[1]))
        guard width != 0, height != 0 else { throw .invalid("A size of 0 pixels makes no picture.") }
        switch (width, height, pair[0].isEmpty, pair[1].isEmpty) {
        case (let width?, let height?, _, _):
            return Size(
                form: confined ? .confined(width: width, height: height) : .exact(width: width, height: height),
                upscale: upscale)
        case (let width?, nil, false, true) where !confined:
            return Size(form: .width(width), upscale: upscale)
        case (nil, let height?, true, false) where !confined:
            return Size(form: .height(height), upscale: upscale)
        default:
            throw invalid()
        }
    }

    private static func rotation(_ text: Bytes) throws(Failure) -> (mirrored: Bool, quarters: Int) {
        let mirrored = text.first == UInt8(ascii: "!")
        guard let degrees = decimal(mirrored ? text.dropFirst() : text), degrees <= 360 else {
            throw .invalid(
                "The rotation must be a number of degrees from 0 to 360, with an optional !, not \(quoted(text)).")
        }
        guard degrees.truncatingRemainder(dividingBy: 90) == 0 else {
            throw .unsupported("This server turns pictures by 0, 90, 180 or 270 degrees only, not \(quoted(text)).")
        }
        return (mirrored, Int(degrees / 90) % 4)
    }

    private static func qualityAndFormat(_ text: Bytes) throws(Failure) -> (Quality, ImageDerivation.Encoding) {
        guard let dot = text.lastIndex(of: UInt8(ascii: ".")), let quality = quality(text[..<dot]) else {
            throw .invalid(
                "The last segment must be {quality}.{format}, the quality being default, color, gray or "
                    + "bitonal, not \(quoted(text)).")
        }
        let format = text[(dot + 1)...]
        if matches(format, "jpg") { return (quality, .jpeg) }
        if matches(format, "png") { return (quality, .png) }
        if matches(format, "webp") { return (quality, .webp) }
        if matches(format, "tif") || matches(format, "gif") || matches(format, "pdf") || matches(format, "jp2") {
            throw .unsupported("This server makes jpg, png and webp, not \(quoted(format)).")
        }
        throw .invalid("The format must be jpg, png or webp, not \(quoted(format)).")
    }

    private static func quality(_ text: Bytes) -> Quality? {
        if matches(text, "default") { return .default }
        if matches(text, "color") { return .color }
        if matches(text, "gray") { return .gray }
        if matches(text, "bitonal") { return .bitonal }
        return nil
    }

    /// A whole number of at most `digits` decimal digits, without sign or leading zeros (except 0
    /// itself).
    private static func integer(_ text: Bytes, digits: Int = maxDigits) -> Int? {
        guard (1...digits).contains(text.count), isDigits(text), text.count == 1 || text.first != UInt8(ascii: "0")
        else { return nil }
        return value(of: text)
    }

    /// A non-negative decimal: digits, then optionally `.` and digits (`12`, `12.5`, `0.25`), at
    /// most `maxDigits` digits before the point and as many after.
    private static func decimal(_ text: Bytes) -> Double? {
        let point = text.firstIndex(of: UInt8(ascii: "."))
        let whole = text[..<(point ?? text.endIndex)]
        guard (1...maxDigits).contains(whole.count), isDigits(whole) else { return nil }
        guard let point else { return Double(value(of: whole)) }
        let fraction = text[(point + 1)...]
        guard (1...maxDigits).contains(fraction.count), isDigits(fraction) else { return nil }
        return Double(String(decoding: text, as: UTF8.self))
    }

    /// The value of a run of decimal digits short enough not to overflow (`integer`, `decimal`).
    private static func value(of digits: Bytes) -> Int {
        digits.reduce(0) { $0 * 10 + Int($1 &- 0x30) }
    }

    private static func isDigits(_ text: Bytes) -> Bool {
        !text.isEmpty && text.allSatisfy { (0x30...0x39).contains($0) }
    }

    private static let comma = UInt8(ascii: ",")

    /// Whether `text` is exactly `word` (ASCII).
    private static func matches(_ text: Bytes, _ word: StaticString) -> Bool {
        text.elementsEqual(UnsafeBufferPointer(start: word.utf8Start, count: word.utf8CodeUnitCount))
    }

    /// Whether `text` starts with `prefix` (ASCII).
    private static func hasPrefix(_ text: Bytes, _ prefix: StaticString) -> Bool {
        text.starts(with: UnsafeBufferPointer(start: prefix.utf8Start, count: prefix.utf8CodeUnitCount))
    }

    /// `text` in quotes for a message, cut to 40 characters (it comes from the client).
    private static func quoted(_ text: Bytes) -> String {
        let decoded = String(decoding: text, as: UTF8.self)
        let cut = decoded.count > 40 ? decoded.prefix(40) + "…" : Substring(decoded)
        return "\"" + String(cut.unicodeScalars.map { $0.value < 0x20 || $0.value == 0x7F ? "?" : Character($0) })
            + "\""
    }
}
