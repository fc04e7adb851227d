/// What an image file's own bytes say before anything decodes it: its format, by the magic bytes
/// at its start, and its pixel size, from the header that declares it. Pure and total: any bytes
/// give an answer or an `ImageHeaderError`, never a trap, and nothing is allocated per pixel, so a
/// file that declares 100,000 × 100,000 pixels is measured, not decoded.
public struct ImageHeader: Sendable, Equatable {
    /// One of the formats the image tier accepts.
    public enum Format: String, Sendable, CaseIterable {
        case jpeg, png, webp, tiff

        /// The media type served for it.
        public var mediaType: String {
            switch self {
            case .jpeg: "image/jpeg"
            case .png: "image/png"
            case .webp: "image/webp"
            case .tiff: "image/tiff"
            }
        }
    }

    public let format: Format
    /// Pixels across, at least 1.
    public let width: Int
    /// Pixels down, at least 1.
    public let height: Int

    /// Width times height; `Int.max` when that does not fit (a declared size is hostile: two
    /// 32-bit sides overflow 64 bits).
    public var pixels: Int {
        let (product, overflow) = width.multipliedReportingOverflow(by: height)
        return overflow ? Int.max : product
    }

    /// Reads the format and pixel size of a whole file's `bytes`, and checks that the file is
    /// whole: a JPEG must end with its end-of-image marker, a PNG with its `IEND` chunk, a WebP
    /// must be as long as its RIFF header says (a TIFF's layout has no end to check).
    public static func read(_ bytes: [UInt8]) -> Result<ImageHeader, ImageHeaderError> {
        bytes.withUnsafeBufferPointer { read(ByteReader($0)) }
    }

    private static func read(_ bytes: ByteReader) -> Result<ImageHeader, ImageHeaderError> {
        guard let format = Format.sniff(bytes) else { return .failure(.notAnImage) }
        let size: Result<(Int, Int), ImageHeaderError>
        switch format {
        case .jpeg: size = JPEGHeader.size(bytes)
        case .png: size = PNGHeader.size(bytes)
        case .webp: size = WebPHeader.size(bytes)
        case .tiff: size = TIFFHeader.size(bytes)
        }
        return size.flatMap { width, height in
            guard width > 0, height > 0 else { return .failure(.malformed("\(format.rawValue) declares no pixels")) }
            return .success(ImageHeader(format: format, width: width, height: height))
        }
    }

    public init(format: Format, width: Int, height: Int) {
        self.format = format
        self.width = width
        self.height = height
    }
}

/// Why bytes are not an image the tier accepts.
public enum ImageHeaderError: Error, Sendable, Equatable {
    /// The first bytes are none of JPEG, PNG, WebP or TIFF.
    case notAnImage
    /// The file ends before its header or its last marker: a torn or cut-off file.
    case truncated(String)
    /// The header is there and makes no sense. The text says where, for the log.
    case malformed(String)

    /// One line for the log and for problem details.
    public var description: String {
        switch self {
        case .notAnImage: "not a JPEG, PNG, WebP or TIFF file"
        case .truncated(let detail): "truncated: \(detail)"
        case .malformed(let detail): "malformed: \(detail)"
        }
    }
}

extension ImageHeader.Format {
    /// The format whose magic bytes `bytes` start with, or nil.
    static func sniff(_ bytes: ByteReader) -> Self? {
        if bytes.starts(with: [0xFF, 0xD8, 0xFF]) { return .jpeg }
        if bytes.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return .png }
        if bytes.starts(with: Array("RIFF".utf8)), bytes.matches(Array("WEBP".utf8), at: 8) { return .webp }
        if bytes.starts(with: [0x49, 0x49, 0x2A, 0x00]) || bytes.starts(with: [0x4D, 0x4D, 0x00, 0x2A]) {
            return .tiff
        }
        return nil
    }

    /// The format whose magic bytes `bytes` start with, or nil: enough of a file's first bytes
    /// (12) to tell, before the rest has arrived.
    public static func sniff(_ bytes: [UInt8]) -> Self? {
        bytes.withUnsafeBufferPointer { sniff(ByteReader($0)) }
    }
}
