import MetEngine

/// The `search_facts` table in memory, for local search: filters, facets and the orders by ID and
/// date are worked out here over the words' matches, which SQLite gives as object IDs. Joined in
/// SQL, the facts of each match cost a B-tree lookup (and each facet one more pass): 45 ms for a
/// word of 7,700 matches among 100,000 records, against 2 ms here.
///
/// The copy is of one version of the index (`search_version`, which every transaction that changes
/// the index raises). The writer of this process brings it to its own new version after each
/// commit, with what it changed; a search that finds the file at another version (another process
/// wrote, or the copy is not loaded yet) loads the whole table again, in its read transaction.
/// Any thread.
final class SearchFacts: Sendable {
    /// One record's facts. Codes index `Table.names`; -1 when there is none.
    struct Fact: Sendable, Equatable {
        var department: Int32 = -1
        var classification: Int32 = -1
        /// `Int16.min` when there is none.
        var century: Int16 = .min
        var flags: UInt8 = 0
        /// Years; `Int32.min` when there is none.
        var begin: Int32 = .min
        var end: Int32 = .min

        static let highlight: UInt8 = 1
        static let onView: UInt8 = 2
        static let image: UInt8 = 4
        static let publicDomain: UInt8 = 8
        /// Marks a slot of `Table`'s array that holds a record's facts.
        static let present: UInt8 = 128
    }

    /// A record's facts as the table holds them (names, not codes).
    struct Row: Sendable, Equatable {
        var department: String?
        var classification: String?
        var century: Int?
        var isHighlight: Bool
        var isOnView: Bool
        var hasImage: Bool
        var isPublicDomain: Bool
        var begin: Int?
        var end: Int?
    }

    /// The facts of one version of the index: in an array by object ID (a lookup per match is an
    /// index, not a hash: a dictionary's took 9 % of a search), and past `denseLimit` (no Met ID
    /// is near it; a forged one must not grow the array) in a dictionary.
    struct Table: Sendable {
        var version: Int64
        private var dense: [Fact] = []
        private var sparse: [Int: Fact] = [:]
        /// The records indexed.
        private(set) var count = 0
        /// Department and classification names, by code.
        var names: [String] = []
        var codes: [String: Int32] = [:]

        mutating func code(_ name: String?) -> Int32 {
            guard let name else { return -1 }
            if let code = codes[name] { return code }
            let code = Int32(names.count)
            names.append(name)
            codes[name] = code
            return code
        }

        /// The IDs below it are kept in the array.
        static let denseLimit = 4_000_000

        init(version: Int64) {
            self.version = version
        }

        /// Object `id`'s facts, when it is indexed.
        subscript(id: Int) -> Fact? {
            if id >= 0 && id < dense.count {
                let fact = dense[id]
                return fact.flags & Fact.present != 0 ? fact : nil
            }
            return id >= Self.denseLimit ? sparse[id] : nil
        }

        /// Calls `body` with every record's ID and facts, by ID (the array's), then the rest.
        func visit(_ body: (Int, Fact) -> Void) {
            for (id, fact) in dense.enumerated() where fact.flags & Fact.present != 0 { body(id, fact) }
            for (id, fact) in sparse { body(id, fact) }
        }

        mutating func removeAll() {
            dense.removeAll()
            sparse.removeAll()
            count = 0
        }

        private mutating func store(_ id: Int, _ fact: Fact?) {
            if self[id] != nil { count -= 1 }
            if fact != nil { count += 1 }
            guard id >= 0 && id < Self.denseLimit else {
                sparse[id] = fact
                return
            }
            if id >= dense.count {
                guard fact != nil else { return }
                dense.append(
                    contentsOf: repeatElement(Fact(), count: min(Self.denseLimit, (id + 4_096) & ~4_095) - dense.count))
            }
            dense[id] = fact ?? Fact()
        }

        mutating func set(_ id: Int, _ row: Row?) {
            guard let row else {
                store(id, nil)
                return
            }
            var fact = Fact()
            fact.department = code(row.department)
            fact.classification = code(row.classification)
            fact.century = row.century.map { Int16(clamping: $0) } ?? .min
            fact.flags =
                Fact.present | (row.isHighlight ? Fact.highlight : 0) | (row.isOnView ? Fact.onView : 0)
                | (row.hasImage ? Fact.image : 0) | (row.isPublicDomain ? Fact.publicDomain : 0)
            fact.begin = row.begin.map { Int32(clamping: $0) } ?? .min
            fact.end = row.end.map { Int32(clamping: $0) } ?? .min
            store(id, fact)
        }
    }

    private let table = Locked<Table?>(nil)

    /// The copy at `version`, loaded with `load` (the table's rows, read in the caller's
    /// transaction) when the copy is of another version or not loaded.
    func table(at version: Int64, load: () throws(SQLiteError) -> [(Int, Row)]) throws(SQLiteError) -> Table {
        if let held = table.withLock({ $0 }), held.version == version { return held }
        var loaded = Table(version: version)
        for (id, row) in try load() { loaded.set(id, row) }
        table.withLock { held in
            // Never back to an older version than a writer brought it to meanwhile.
            if held == nil || held!.version < version { held = loaded }
        }
        return loaded
    }

    /// What the writer changed in the transaction that took the index from `version - 1` to
    /// `version` (nil facts: taken out; `cleared`: emptied first), applied to the copy if it is of
    /// `version - 1`; else the copy is left for the next search to load.
    func apply(_ changes: [(Int, Row?)], cleared: Bool, version: Int64) {
        table.withLock { held in
            guard var copy = held, copy.version == version - 1 else { return }
            held = nil  // One copy, not two, while it changes.
            if cleared { copy.removeAll() }
            for (id, row) in changes { copy.set(id, row) }
            copy.version = version
            held = copy
        }
    }
}
