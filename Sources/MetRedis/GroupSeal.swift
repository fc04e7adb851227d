import CCrypto

/// What the instances of a group sign what they write to Redis with: HMAC-SHA256 keyed with the
/// group's secret (`--redis-secret`), over a domain word, the cache key and the bytes. A record or
/// notice is its bytes followed by the 32-byte tag; one whose tag does not verify was not written
/// by an instance that knows the secret (or was damaged) and is refused. The key is in the signed
/// message, so a record copied under another key is refused too. A record written again later
/// under its own key is not told from the first (a replay of an older record of the same key
/// stays possible for whoever can write to Redis; its own times decide its freshness).
///
/// Any thread: the keyed context is only read (each tag is made from a copy of it).
final class GroupSeal: @unchecked Sendable {
    /// What is signed: a domain word keeps a record's tag from ever verifying as a notice's.
    enum Domain: String {
        case record = "themet record 1"
        case notice = "themet notice 1"
    }

    /// Bytes of a tag.
    static let tagBytes = 32

    /// The keyed HMAC context (EVP_MAC_CTX), created once, read by every thread, freed never: the
    /// seal lives as long as the process's shared tier.
    private let keyed: OpaquePointer

    /// A seal keyed with `secret`'s bytes; nil when libcrypto cannot make one.
    init?(secret: String) {
        let bytes = Array(secret.utf8)
        guard let keyed = bytes.withUnsafeBytes({ ccrypto_hmac_sha256_keyed($0.baseAddress, $0.count) }) else {
            return nil
        }
        self.keyed = keyed
    }

    /// `bytes` followed by their tag; nil when libcrypto fails (out of memory).
    func seal(_ bytes: [UInt8], _ domain: Domain, key: String) -> [UInt8]? {
        guard let tag = tag(bytes[...], domain, key: key) else { return nil }
        var sealed = bytes
        sealed += tag
        return sealed
    }

    /// The bytes `sealed` carries when its tag verifies (compared in constant time), else nil.
    func open(_ sealed: [UInt8], _ domain: Domain, key: String) -> [UInt8]? {
        guard sealed.count >= Self.tagBytes else { return nil }
        let split = sealed.count - Self.tagBytes
        guard let expected = tag(sealed[..<split], domain, key: key) else { return nil }
        let verified = expected.withUnsafeBytes { expected in
            sealed[split...].withUnsafeBytes { given in
                CRYPTO_memcmp(expected.baseAddress, given.baseAddress, Self.tagBytes) == 0
            }
        }
        guard verified else { return nil }
        var bytes = sealed
        bytes.removeLast(Self.tagBytes)
        return bytes
    }

    /// The tag of `domain`, a zero byte, `key`, a zero byte and `bytes`; nil when libcrypto fails.
    private func tag(_ bytes: ArraySlice<UInt8>, _ domain: Domain, key: String) -> [UInt8]? {
        let prefix = Array(domain.rawValue.utf8) + [0] + Array(key.utf8) + [0]
        var tag = [UInt8](repeating: 0, count: Self.tagBytes)
        let made = prefix.withUnsafeBytes { prefix in
            bytes.withUnsafeBytes { body in
                let parts: [UnsafeRawPointer?] = [prefix.baseAddress, body.baseAddress ?? prefix.baseAddress]
                let lengths = [prefix.count, body.count]
                return tag.withUnsafeMutableBufferPointer { out in
                    parts.withUnsafeBufferPointer { parts in
                        ccrypto_hmac_sha256(keyed, parts.baseAddress, lengths, 2, out.baseAddress)
                    }
                }
            }
        }
        return made == 1 ? tag : nil
    }
}
