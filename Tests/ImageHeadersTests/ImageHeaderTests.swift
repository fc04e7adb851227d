import ImageHeaders
import MetImaging
import Testing

@Suite("Image headers: format and pixel size without decoding")
struct ImageHeaderTests {
    /// A real image of `width` × `height` from libvips, in each encoder's own bytes.
    static func picture(width: Int, height: Int) throws -> Picture {
        let band = try Picture.sines(width: width, height: height, across: 2, down: 3).scaled(by: 100, plus: 128)
        return try Picture.rgb(band, band, band)
    }

    @Test("libvips's own JPEG, PNG and WebP are read at their size")
    func realEncodings() throws {
        let picture = try Self.picture(width: 321, height: 123)
        #expect(ImageHeader.read(try picture.jpeg()) == .success(ImageHeader(format: .jpeg, width: 321, height: 123)))
        #expect(ImageHeader.read(try picture.png()) == .success(ImageHeader(format: .png, width: 321, height: 123)))
        #expect(ImageHeader.read(try picture.webp()) == .success(ImageHeader(format: .webp, width: 321, height: 123)))
    }

    @Test("A cut-off JPEG, PNG or WebP is truncated, whatever its header says")
    func truncated() throws {
        let picture = try Self.picture(width: 64, height: 48)
        for bytes in [try picture.jpeg(), try picture.png(), try picture.webp()] {
            for keep in [bytes.count - 100, bytes.count / 2, 40, 11, 3] {
                guard case .failure(let error) = ImageHeader.read(Array(bytes.prefix(keep))) else {
                    Issue.record("\(keep) of \(bytes.count) bytes read as whole")
                    continue
                }
                if case .truncated = error {} else if keep >= 12 { Issue.record("\(keep) bytes: \(error)") }
            }
        }
    }

    @Test("A JPEG declaring 100,000 × 100,000 pixels is measured, not decoded")
    func declaredGiant() {
        // SOI, SOF0 (8-bit, 100000 does not fit 16 bits: 65,500 × 65,500, the format's most), EOI.
        let bytes: [UInt8] =
            [0xFF, 0xD8, 0xFF, 0xC0, 0x00, 0x11, 0x08, 0xFF, 0xDC, 0xFF, 0xDC, 0x03]
            + [UInt8](repeating: 0, count: 9) + [0xFF, 0xD9]
        #expect(ImageHeader.read(bytes) == .success(ImageHeader(format: .jpeg, width: 65_500, height: 65_500)))
        #expect((try? ImageHeader.read(bytes).get().pixels) == 4_290_250_000)
    }

    @Test("Hand-made headers: PNG, the three WebP chunks, TIFF in both byte orders")
    func handMade() {
        let png: [UInt8] =
            [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 13] + Array("IHDR".utf8)
            + [0x00, 0x01, 0x86, 0xA0, 0x00, 0x01, 0x86, 0xA0, 8, 2, 0, 0, 0, 0, 0, 0, 0] + [0, 0, 0, 0]
            + Array("IEND".utf8) + [0xAE, 0x42, 0x60, 0x82]
        #expect(ImageHeader.read(png) == .success(ImageHeader(format: .png, width: 100_000, height: 100_000)))

        func riff(_ chunk: String, _ payload: [UInt8]) -> [UInt8] {
            let body = Array("WEBP".utf8) + Array(chunk.utf8) + [UInt8(payload.count), 0, 0, 0] + payload
            let length = body.count
            return Array("RIFF".utf8) + [UInt8(length & 0xFF), UInt8(length >> 8), 0, 0] + body
        }
        let lossy = riff("VP8 ", [0, 0, 0, 0x9D, 0x01, 0x2A, 0x40, 0x01, 0xF0, 0x00])
        #expect(ImageHeader.read(lossy) == .success(ImageHeader(format: .webp, width: 320, height: 240)))
        // VP8L: 14 bits width−1, 14 bits height−1: 1000 × 700.
        let bits = 999 | 699 << 14
        let lossless = riff("VP8L", [0x2F, UInt8(bits & 0xFF), UInt8(bits >> 8 & 0xFF), UInt8(bits >> 16 & 0xFF), 0])
        #expect(ImageHeader.read(lossless) == .success(ImageHeader(format: .webp, width: 1000, height: 700)))
        let extended = riff("VP8X", [0, 0, 0, 0, 0x9F, 0x0F, 0x00, 0x9F, 0x0F, 0x00])
        #expect(ImageHeader.read(extended) == .success(ImageHeader(format: .webp, width: 4000, height: 4000)))

        let little: [UInt8] =
            [0x49, 0x49, 0x2A, 0x00, 8, 0, 0, 0, 2, 0] + [0, 1, 3, 0, 1, 0, 0, 0, 0xA0, 0x0F, 0, 0]
            + [1, 1, 4, 0, 1, 0, 0, 0, 0xB8, 0x0B, 0, 0] + [0, 0, 0, 0]
        #expect(ImageHeader.read(little) == .success(ImageHeader(format: .tiff, width: 4000, height: 3000)))
        let big: [UInt8] =
            [0x4D, 0x4D, 0x00, 0x2A, 0, 0, 0, 8, 0, 2] + [1, 0, 0, 3, 0, 0, 0, 1, 0x0F, 0xA0, 0, 0]
            + [1, 1, 0, 3, 0, 0, 0, 1, 0x0B, 0xB8, 0, 0] + [0, 0, 0, 0]
        #expect(ImageHeader.read(big) == .success(ImageHeader(format: .tiff, width: 4000, height: 3000)))
    }

    @Test("Sides whose product overflows 64 bits are refused, never multiplied into a trap")
    func overflowingSides() {
        func png(_ side: [UInt8]) -> [UInt8] {
            [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 13] + Array("IHDR".utf8) + side + side
                + [8, 2, 0, 0, 0, 0, 0, 0, 0] + [0, 0, 0, 0] + Array("IEND".utf8) + [0xAE, 0x42, 0x60, 0x82]
        }
        guard case .failure(.malformed) = ImageHeader.read(png([0xFF, 0xFF, 0xFF, 0xFF])) else {
            Issue.record("a PNG of 4,294,967,295 px a side was read")
            return
        }
        #expect(ImageHeader(format: .png, width: Int.max / 2, height: 3).pixels == Int.max)
        #expect(
            ImageHeader.read(png([0x7F, 0xFF, 0xFF, 0xFF]))
                == .success(ImageHeader(format: .png, width: 2_147_483_647, height: 2_147_483_647)))
    }

    @Test(
        "What is not an image says so",
        arguments: [
            Array("<html><body>Request unsuccessful. Incapsula incident ID</body></html>".utf8),
            Array("{\"message\":\"Not a valid object\"}".utf8), Array("GIF89a\u{1}\u{0}\u{1}\u{0}".utf8), [],
            [0xFF, 0xD8],
        ])
    func notImages(bytes: [UInt8]) {
        #expect(ImageHeader.read(bytes) == .failure(.notAnImage))
    }

    @Test("A JPEG whose markers lead nowhere is malformed or truncated, never a trap")
    func hostileMarkers() {
        let cases: [[UInt8]] = [
            [0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x00],  // length 0
            [0xFF, 0xD8, 0xFF, 0xE0, 0xFF, 0xFF],  // a length past the end
            [0xFF, 0xD8, 0xFF, 0xDA, 0x00, 0x08],  // scan before frame
            [0xFF, 0xD8, 0xFF] + [UInt8](repeating: 0xFF, count: 1_000),  // fill bytes to the end
            [0xFF, 0xD8, 0xFF, 0xC0, 0x00, 0x11, 0x08, 0x00, 0x10, 0x00, 0x10],  // frame, no end marker
            [0xFF, 0xD8, 0xFF, 0xC0, 0x00, 0x11, 0x08, 0x00, 0x00, 0x00, 0x10] + [0xFF, 0xD9],  // no rows
        ]
        for bytes in cases {
            guard case .failure(let error) = ImageHeader.read(bytes) else {
                Issue.record("\(bytes.prefix(12)) read as an image")
                continue
            }
            #expect(error != .notAnImage)
        }
    }
}
