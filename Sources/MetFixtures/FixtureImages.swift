import Foundation
import HTTPGrammar
import HTTPWire
import MetEngine
import MetImaging

/// The fake Met's image host (`images.metmuseum.org`): a picture for every path a record of its
/// archive names, made by libvips from the path alone, so the same path gives the same bytes in
/// every run and on every machine, and a few specimens the image tier must refuse.
///
/// Shapes as the real host's (docs/MET-API.md §7): `web-large` about 500–650 px on the long side,
/// `original` 4,000 px for the fixture records and 1,200–2,999 px for synthetic ones; JPEG, with
/// the host's `Cache-Control: max-age=432000`, a strong `ETag` and a `Last-Modified`.
///
/// Pictures are made on first request, tens of milliseconds to seconds of CPU each, on a thread of
/// their own: never on Swift's cooperative pool, whose two threads on two cores also run the
/// tests and the servers' tasks (a picture made there held up everything else for half a minute
/// under ThreadSanitizer). They are kept once made, up to `keptBytes`. Thread-safe.
public final class FixtureImages: Sendable {
    /// One picture as the host sends it.
    public struct Image: Sendable {
        public let bytes: [UInt8]
        public let contentType: String
        public let etag: String
        public let lastModified: String
    }

    /// The pictures that are not a record's: what an image tier must refuse or handle apart.
    public enum Specimen: Sendable {
        /// A real PNG (the host serves a few).
        case png
        /// A JPEG cut off halfway, as a torn download is.
        case truncated
        /// A small file whose header declares 60,000 × 60,000 pixels: a decompression bomb.
        case bomb
        /// An HTML page served as a `.jpg`.
        case notAnImage
        /// A real JPEG padded past 34 MiB, larger than the tier's default bound.
        case oversized
    }

    /// The specimens, by path (department code `ts`, which no department uses).
    public static let specimens: [String: Specimen] = [
        "/CRDImages/ts/original/specimen.png": .png,
        "/CRDImages/ts/original/truncated.jpg": .truncated,
        "/CRDImages/ts/original/bomb.jpg": .bomb,
        "/CRDImages/ts/original/not-an-image.jpg": .notAnImage,
        "/CRDImages/ts/original/oversized.jpg": .oversized,
    ]

    /// The host's lifetime for every picture, in seconds.
    public static let maxAge = 432_000
    /// The most bytes of pictures kept once made; past it, the oldest are made again when asked.
    static let keptBytes = 256 << 20

    private let archive: FixtureArchive
    private let kept = Locked<(images: [String: Image], order: [String], bytes: Int)>(([:], [], 0))

    public init(archive: FixtureArchive) {
        self.archive = archive
        // The fake host stands beside the tests and the server it feeds: one thread of pictures.
        Vips.limitThreads(to: 1)
    }

    /// The picture at `path`, or nil when the host has none (a 404). Makes it on first use, on a
    /// thread of its own (see the type's comment); a kept one is returned at once.
    ///
    /// - Throws: `VipsError` when libvips cannot make it.
    public func image(at path: String) async throws(VipsError) -> Image? {
        guard archive.hasImage(path) else { return nil }
        if let image = kept.withLock({ $0.images[path] }) { return image }
        let made: Result<Image, VipsError> = await awaitDelivery { deliver in
            Thread { deliver(Result { () throws(VipsError) in try self.make(path) }) }.start()
        }
        let image = try made.get()
        keep(image, at: path)
        return image
    }

    /// Makes the picture at `path` (one the archive holds), blocking the calling thread.
    private func make(_ path: String) throws(VipsError) -> Image {
        let seed = Self.seed(path)
        let bytes: [UInt8]
        var contentType = "image/jpeg"
        if let specimen = Self.specimens[path] {
            bytes = try Self.specimen(specimen, seed: seed)
            if specimen == .png { contentType = "image/png" }
            if specimen == .notAnImage { contentType = "text/html" }
        } else {
            let (width, height) = Self.size(of: path, seed: seed)
            bytes = try Self.art(width: width, height: height, seed: seed).jpeg(quality: 82)
        }
        // Last modified on a day of 2019–2025 drawn from the path, at midnight UTC.
        let day = 17_897 + Int(seed % 2_557)
        // The bytes are a function of the path: its seed and their length name them, without
        // hashing 34 MiB (which a sanitizer's debug build takes a minute over).
        let etag = "\"\(String(seed, radix: 16))-\(String(bytes.count, radix: 16))\""
        return Image(
            bytes: bytes, contentType: contentType, etag: etag, lastModified: HTTPDate.imfFixdate(day * 86_400))
    }

    private func keep(_ image: Image, at path: String) {
        kept.withLock { kept in
            guard kept.images[path] == nil else { return }
            kept.images[path] = image
            kept.order.append(path)
            kept.bytes += image.bytes.count
            while kept.bytes > Self.keptBytes, !kept.order.isEmpty {
                let oldest = kept.order.removeFirst()
                kept.bytes -= kept.images.removeValue(forKey: oldest)?.bytes.count ?? 0
            }
        }
    }

    /// Pixels across and down: a rendition's long side from the path's rendition and record,
    /// an aspect ratio from 0.62 to 1.6 drawn from the path.
    static func size(of path: String, seed: UInt64) -> (width: Int, height: Int) {
        let long: Int
        if path.contains("/web-large/") {
            long = 500 + Int(seed % 150)
        } else if path.contains("/SYN") {
            long = 1_200 + Int(seed % 1_800)
        } else {
            long = 4_000
        }
        let aspect = 0.62 + Double((seed >> 16) % 1_000) / 1_000 * 0.98
        let short = max(1, Int((Double(long) / max(aspect, 1 / aspect)).rounded()))
        return aspect >= 1 ? (long, short) : (short, long)
    }

    /// Painting-like colour fields: per band, a field of soft cells (a wave across times a wave
    /// down) over a base tone, a finer slanting wave, and a little grain, each drawn from the seed.
    /// Made at most 1,000 px on its long side and then enlarged: the fields are smooth, and a
    /// 4,000 px original costs a sixteenth of the work.
    static func art(width: Int, height: Int, seed: UInt64) throws(VipsError) -> Picture {
        let scale = max(1, Double(max(width, height)) / 1_000)
        guard scale > 1 else { return try paint(width: width, height: height, seed: seed) }
        let small = try paint(
            width: max(1, Int(Double(width) / scale)), height: max(1, Int(Double(height) / scale)), seed: seed)
        return try small.resized(width: width, height: height)
    }

    private static func paint(width: Int, height: Int, seed: UInt64) throws(VipsError) -> Picture {
        var generator = SplitMix64(seed: seed)
        func unit() -> Double { Double(generator.next() >> 11) * 0x1p-53 }
        var bands: [Picture] = []
        for band in 0..<3 {
            let across = try Picture.sines(width: width, height: height, across: 0.5 + unit() * 3, down: 0)
            let down = try Picture.sines(width: width, height: height, across: 0, down: 0.5 + unit() * 3)
            let cells = try across.multiplying(down).scaled(by: 50 + unit() * 50, plus: 70 + unit() * 110)
            let fine = try Picture.sines(width: width, height: height, across: 3 + unit() * 9, down: 2 + unit() * 7)
                .scaled(by: 8 + unit() * 16, plus: 0)
            let grain = try Picture.noise(width: width, height: height, sigma: 5, seed: Int(seed % 100_000) + band)
            bands.append(try cells.adding(fine).adding(grain))
        }
        return try Picture.rgb(bands[0], bands[1], bands[2])
    }

    private static func specimen(_ specimen: Specimen, seed: UInt64) throws(VipsError) -> [UInt8] {
        switch specimen {
        case .png:
            return try art(width: 640, height: 480, seed: seed).png()
        case .truncated:
            let whole = try art(width: 800, height: 600, seed: seed).jpeg()
            return Array(whole.prefix(whole.count / 2))
        case .bomb:
            // SOI, a baseline frame header declaring 60,000 × 60,000 pixels in 3 components, EOI:
            // whole by its markers, and 10.8 billion bytes of pixels if anything decoded it.
            return [0xFF, 0xD8, 0xFF, 0xC0, 0x00, 0x11, 0x08, 0xEA, 0x60, 0xEA, 0x60, 0x03]
                + [0x01, 0x22, 0x00, 0x02, 0x11, 0x01, 0x03, 0x11, 0x01] + [0xFF, 0xD9]
        case .notAnImage:
            return Array("<html><body><h1>Not an image</h1></body></html>".utf8)
        case .oversized:
            // A real JPEG with comment segments after its start marker, up to 34 MiB.
            let picture = try art(width: 640, height: 480, seed: seed).jpeg()
            let segment: [UInt8] = [0xFF, 0xFE, 0xFF, 0xFF] + [UInt8](repeating: 0x20, count: 65_533)
            var bytes = Array(picture.prefix(2))
            while bytes.count < 34 << 20 { bytes += segment }
            return bytes + picture.dropFirst(2)
        }
    }

    /// A seed from the path's bytes (FNV-1a), the same on every run.
    static func seed(_ path: String) -> UInt64 {
        FNV1a.hash(path.utf8)
    }
}
