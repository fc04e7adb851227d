import Testing

@testable import MetEngine

/// The hit responses kept for entries: shared within their second, matched by serial only, two
/// entries to a set, the one used less lately given up for a third.
@Suite("Hit response table")
struct HitResponseTableTests {
    /// What `make` made, marked by `tag` in its body, and how many times it ran.
    private final class Maker {
        var made = 0

        func make(_ tag: String) -> Response {
            made += 1
            return Response(status: 200, body: Array(tag.utf8))
        }
    }

    private func response(
        _ table: HitResponseTable, _ serial: UInt64, second: Int = 1_000, gzip: Bool = false, variant: String = "",
        _ maker: Maker
    ) -> Response {
        table.response(for: serial, second: second, age: 5, ttl: 60, gzip: gzip, variant: variant) {
            maker.make("\(serial)|\(second)|\(gzip)|\(variant)")
        }
    }

    @Test func aResponseIsSharedWithinItsSecondAndMadeAnewInTheNext() throws {
        let table = HitResponseTable(sets: 4)
        let maker = Maker()
        let first = response(table, 7, maker)
        let again = response(table, 7, maker)
        #expect(maker.made == 1)
        let shared = try #require(first.shared)
        #expect(again.shared === shared)
        let later = response(table, 7, second: 1_001, maker)
        #expect(maker.made == 2)
        #expect(later.shared !== shared)
        #expect(later.body == Array("7|1001|false|".utf8))
    }

    @Test func eachVariantAndEncodingHasItsOwnResponse() {
        let table = HitResponseTable(sets: 4)
        let maker = Maker()
        let identity = response(table, 7, maker)
        let gzipped = response(table, 7, gzip: true, maker)
        #expect(maker.made == 2)
        #expect(identity.body == Array("7|1000|false|".utf8))
        #expect(gzipped.body == Array("7|1000|true|".utf8))
        #expect(response(table, 7, maker).shared === identity.shared)
        #expect(response(table, 7, gzip: true, maker).shared === gzipped.shared)
        #expect(maker.made == 2)
        // Another variant replaces what was kept for the entry.
        #expect(response(table, 7, variant: "http://b", maker).body == Array("7|1000|false|http://b".utf8))
        #expect(response(table, 7, maker).shared !== identity.shared)
        #expect(maker.made == 4)
    }

    /// With one set, every entry competes for its two slots: two are kept, a third takes the
    /// slot used less lately, and no entry ever gets another's response.
    @Test func twoEntriesShareASetAndAThirdTakesTheLeastRecentSlot() {
        let table = HitResponseTable(sets: 1)
        let maker = Maker()
        let a = response(table, 1, maker)
        let b = response(table, 2, maker)
        #expect(response(table, 1, maker).shared === a.shared)
        #expect(response(table, 2, maker).shared === b.shared)
        #expect(maker.made == 2)
        // 2 was used last: 3 takes 1's slot.
        let c = response(table, 3, maker)
        #expect(c.body == Array("3|1000|false|".utf8))
        #expect(response(table, 2, maker).shared === b.shared)
        #expect(maker.made == 3)
        let a2 = response(table, 1, maker)
        #expect(a2.body == Array("1|1000|false|".utf8))
        #expect(a2.shared !== a.shared)
        #expect(maker.made == 4)
    }

    @Test func manyEntriesEachGetTheirOwnBytes() {
        let table = HitResponseTable(sets: 2)
        let maker = Maker()
        for round in 0..<3 {
            for serial in UInt64(1)...50 {
                let got = response(table, serial, second: 1_000 + round, maker)
                #expect(got.body == Array("\(serial)|\(1_000 + round)|false|".utf8))
            }
        }
    }

    @Test func serialsAreNeverReused() {
        let entries = (0..<100).map { _ in
            CacheEntry(key: "k", kind: .object, status: 200, body: [], storedAt: 0, policy: FreshnessPolicy())
        }
        #expect(Set(entries.map(\.serial)).count == 100)
        #expect(!entries.contains { $0.serial == 0 })
    }
}
