/// The byte-level rules that both the core and the HTTP/1.1 reader (`HTTPWire`) apply: RFC 3986
/// `unreserved` and `HEXDIG`, RFC 9110 `tchar`, and the ASCII case folding under which field names
/// and tokens compare. One definition of each, so that what the reader accepts and what the core
/// encodes, echoes or looks up cannot drift apart. Inlinable: they run per byte on hot paths (the
/// cache key of every hit, header names).
public enum Grammar {
    /// RFC 3986 `unreserved`: `A–Z a–z 0–9 - . _ ~`.
    @inlinable
    public static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
            UInt8(ascii: "~"):
            true
        default:
            false
        }
    }

    /// The value of one hex digit (`HEXDIG`, either case), or nil.
    @inlinable
    public static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    /// RFC 9110 `tchar`: a byte of a token (a method, a field name, a transfer coding).
    @inlinable
    public static func isTokenByte(_ byte: UInt8) -> Bool {
        // The set as bits over ASCII: bit n of the first mask is byte n, of the second byte 64 + n
        // (the digits and `!#$%&'*+-.`; the letters and `^_`|~`). Every field name of every
        // request and response is checked byte by byte, and a `-` was looked for in a string.
        let mask: UInt64 = byte < 64 ? 0x03FF_6CFA_0000_0000 : 0x57FF_FFFF_C7FF_FFFE
        return byte < 128 && (mask >> UInt64(byte & 63)) & 1 == 1
    }

    /// ASCII case-insensitive equality, enough for field names and tokens (RFC 9110 §5.1): only
    /// the letters A–Z and a–z fold into each other.
    @inlinable
    public static func equalsIgnoringCase(_ a: some Sequence<UInt8>, _ b: some Sequence<UInt8>) -> Bool {
        var a = a.makeIterator()
        var b = b.makeIterator()
        while true {
            switch (a.next(), b.next()) {
            case (nil, nil): return true
            case (let x?, let y?):
                if x == y { continue }
                if x | 0x20 != y | 0x20 || !(0x61...0x7A).contains(x | 0x20) { return false }
            default: return false
            }
        }
    }
}
