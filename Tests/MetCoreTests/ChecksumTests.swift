import Testing

@testable import MetEngine

/// The records' checksums against values computed elsewhere: XXH64 (seed 0) by the `xxhash`
/// package for Python, version 1's by a transcription of it in Python. A literal table: any change
/// to either function fails here, and a change to version 1's would leave the rows and Redis
/// values written before it unreadable.
@Suite("Record checksums")
struct ChecksumTests {
    /// The first `count` bytes of 0, 1, 2, …, 255.
    private static func counting(_ count: Int) -> [UInt8] { (0..<count).map { UInt8($0) } }

    @Test(arguments: [
        (Array("".utf8), 0xEF46_DB37_51D8_E999 as UInt64, 0x320C_2B18_8EFA_0720 as UInt64),
        (Array("a".utf8), 0xD24E_C4F1_A98C_6E5B, 0x29B1_9F81_0573_39C0),
        (Array("abc".utf8), 0x44BC_2CF5_AD77_0999, 0x022B_9F35_BCB3_E5F5),
        (counting(31), 0xC346_D2B5_9B4D_8EE1, 0xE0BF_2E1D_CABC_7D69),
        (counting(32), 0xCBF5_9C51_16FF_32B4, 0xB9F7_6043_4F4B_15C4),
        (counting(100), 0x6AC1_E580_3216_6597, 0xD7BF_686F_9701_535D),
        (counting(256), 0x1FAC_BE84_06CD_904B, 0x0FCD_6F77_43E4_A2D5),
    ])
    func eachChecksumIsTheOneComputedElsewhere(bytes: [UInt8], xxh64: UInt64, version1: UInt64) {
        #expect(bytes.withUnsafeBytes { Checksum.of($0) } == xxh64)
        #expect(bytes.withUnsafeBytes { Checksum.version1($0) } == version1)
    }
}
