/// One workload of the hit table of `Benchmarks/run`, by the same requests.
struct HitCase: Sendable {
    /// The tier a case's answers come from, and so the service that answers it.
    enum Tier: Sendable, CaseIterable {
        /// The memory tier, big enough for every case.
        case memory
        /// The disk tier, read on the loop (`PersistentTier.entryAtOnce`), under a memory tier of
        /// 1 MiB that holds a few hundred of the spread's records.
        case disk
    }

    let name: String
    /// Asked in turn, one per request.
    let targets: [String]
    /// The status every answer has.
    let status: Int
    /// Bytes a warm answer's body holds (a search page with none of its objects pending), if any.
    var warmBody: String?
    var tier = Tier.memory

    /// Synthetic records the in-process upstream answers for (IDs 1 to this), as the bench's
    /// `met-fixture-server --synthetic`.
    static let syntheticRecords = 100_000

    static let all = [
        HitCase(name: "hot object", targets: ["/objects/4242"], status: 200),
        HitCase(name: "1000-object spread", targets: (1...1_000).map { "/objects/\($0)" }, status: 200),
        HitCase(
            name: "search page of 20", targets: ["/search?q=study&limit=20"], status: 200, warmBody: #""pending":[]"#),
        HitCase(name: "widget timeline", targets: ["/widget/timeline"], status: 200),
        HitCase(name: "mirror object", targets: ["/public/collection/v1/objects/4242"], status: 200),
        HitCase(name: "cached 404", targets: ["/objects/\(syntheticRecords + 4242)"], status: 404),
        // In a fixed scattered order (7,919 is prime to 20,000), as a spread's requests come: rows
        // next to each other are not read in turn, nor are records fetched in the same second.
        HitCase(
            name: "disk hit, 20k spread", targets: (0..<20_000).map { "/objects/\($0 * 7_919 % 20_000 + 1)" },
            status: 200, tier: .disk),
    ]
}
