/// A JPEG's size, from its first start-of-frame marker (ITU T.81 §B.2.2), walking the marker
/// segments from the start of the file by their lengths.
enum JPEGHeader {
    /// Bytes at the end in which the end-of-image marker must appear: encoders may pad after it.
    static let endWindow = 64

    static func size(_ bytes: ByteReader) -> Result<(Int, Int), ImageHeaderError> {
        var offset = 2  // after SOI
        while true {
            guard let prefix = bytes.byte(at: offset) else {
                return .failure(.truncated("JPEG ends before its frame header"))
            }
            guard prefix == 0xFF else { return .failure(.malformed("JPEG marker expected at byte \(offset)")) }
            // Fill bytes: any number of 0xFF before a marker.
            var markerOffset = offset + 1
            while bytes.byte(at: markerOffset) == 0xFF { markerOffset += 1 }
            guard let marker = bytes.byte(at: markerOffset) else {
                return .failure(.truncated("JPEG ends before its frame header"))
            }
            offset = markerOffset + 1
            switch marker {
            case 0xD0...0xD7, 0x01:
                continue  // standalone markers: no length
            case 0xD8, 0xD9, 0xDA, 0x00:
                return .failure(.malformed("JPEG has no frame header before marker \(hex(marker))"))
            default:
                break
            }
            guard let length = bytes.integer(at: offset, width: 2) else {
                return .failure(.truncated("JPEG ends inside marker \(hex(marker))"))
            }
            guard length >= 2 else { return .failure(.malformed("JPEG segment length \(length)")) }
            if isStartOfFrame(marker) {
                guard let height = bytes.integer(at: offset + 3, width: 2),
                    let width = bytes.integer(at: offset + 5, width: 2)
                else { return .failure(.truncated("JPEG ends inside its frame header")) }
                guard bytes.tail(contains: [0xFF, 0xD9], within: endWindow) else {
                    return .failure(.truncated("JPEG has no end-of-image marker"))
                }
                return .success((width, height))
            }
            offset += length
        }
    }

    /// SOF0–SOF15 but DHT (C4), JPG (C8) and DAC (CC), which share the range.
    private static func isStartOfFrame(_ marker: UInt8) -> Bool {
        (0xC0...0xCF).contains(marker) && marker != 0xC4 && marker != 0xC8 && marker != 0xCC
    }

    private static func hex(_ byte: UInt8) -> String {
        "0x" + String(byte, radix: 16, uppercase: true)
    }
}
