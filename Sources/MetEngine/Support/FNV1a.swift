/// The 64-bit FNV-1a hash: fast, the same on every run and machine (unlike `Hasher`, which is
/// seeded per process), and not for anything an attacker must not collide. What entity tags,
/// picture file names and the fixture pictures' seeds are made from.
public enum FNV1a {
    /// The hash of `bytes`. About 1 ns per byte: inlinable, so that each caller's module
    /// specializes it for its collection (unspecialized, every byte would go through the
    /// collection's witness table).
    @inlinable
    public static func hash<Bytes: Collection<UInt8>>(_ bytes: Bytes) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes {
            hash ^= UInt64(byte)
            hash &*= 0x0000_0100_0000_01b3
        }
        return hash
    }
}
