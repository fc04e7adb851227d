import MetEngine

/// The local search index of `cache.sqlite` (`LocalSearch`): every object record the tier holds
/// with a 200, as a `SearchDocument`. The writer keeps it in step in the transaction that stores,
/// replaces, removes or evicts the record, so a search finds exactly the records the tier holds;
/// readers query it (`SearchIndexQuery`).
///
/// What it adds to a file of schema version 1 when the file is opened (`CacheDatabase.additions`;
/// older builds ignore it, so what they store or remove is not reflected until `themet reindex`):
/// - `search_text`: an FTS5 table of the documents' columns (`SearchDocument.columns`), its rowid
///   the object ID; words are folded by the `unicode61` tokenizer, diacritics removed.
/// - `search_facts`: the facts filters, facets and sorts read, keyed by object ID.
/// - `search_build`: present while the index is being built from the records already stored (the
///   tables were added to a file that held some, or `themet reindex` asked): `through` is the last
///   `entries` rowid indexed. The writer builds it in the background between its batches.
/// - `search_version`: raised by every transaction that changes the index, so that a copy of the
///   facts in memory (`SearchFacts`) knows whether it is still the file's.
///
/// The writer's instance is used on the writer's thread only, inside its transactions.
final class SearchIndex {
    /// Adds the tables where they are missing, in a transaction of their own, and asks for a build
    /// when the file already holds records; a file that has them all is only read.
    static func add(to connection: SQLiteConnection) throws(SQLiteError) {
        let present = try connection.integer(
            """
            SELECT count(*) FROM sqlite_schema
            WHERE type = 'table' AND name IN ('search_text', 'search_facts', 'search_version')
            """)
        guard present < 3 else { return }
        // Records stored before the index was made are indexed by a build; tables added to an
        // index that exists need none.
        let made = try connection.integer("SELECT count(*) FROM sqlite_schema WHERE name = 'search_text'") > 0
        try connection.execute("BEGIN IMMEDIATE")
        do {
            try connection.execute(
                """
                CREATE VIRTUAL TABLE IF NOT EXISTS search_text USING fts5(
                    \(SearchDocument.columns.joined(separator: ", ")), tokenize = 'unicode61 remove_diacritics 2');
                CREATE TABLE IF NOT EXISTS search_facts (
                    object_id INTEGER PRIMARY KEY, department TEXT, classification TEXT, century INTEGER,
                    is_highlight INTEGER NOT NULL, is_on_view INTEGER NOT NULL, has_image INTEGER NOT NULL,
                    is_public_domain INTEGER NOT NULL, begin_date INTEGER, end_date INTEGER, sort_title TEXT);
                CREATE TABLE IF NOT EXISTS search_build (id INTEGER PRIMARY KEY CHECK (id = 1), through INTEGER NOT NULL);
                INSERT OR IGNORE INTO search_build (id, through)
                    SELECT 1, 0 WHERE \(made ? "0" : "EXISTS (SELECT 1 FROM entries)");
                CREATE TABLE IF NOT EXISTS search_version (id INTEGER PRIMARY KEY CHECK (id = 1), version INTEGER NOT NULL);
                INSERT OR IGNORE INTO search_version (id, version) VALUES (1, 1);
                COMMIT;
                """)
        } catch {
            try? connection.execute("ROLLBACK")
            throw error
        }
    }

    /// The tables, which a snapshot leaves out: the importing tier indexes what it stores.
    static let tableNames = ["search_text", "search_facts", "search_build", "search_version"]

    /// Rows of `entries` a build step reads: about 20 ms of work, so stores queued meanwhile wait
    /// little longer than a batch window.
    static let buildStep = 500

    private let deleteText: SQLiteStatement
    private let insertText: SQLiteStatement
    private let deleteFacts: SQLiteStatement
    private let insertFacts: SQLiteStatement
    private let buildState: SQLiteStatement
    private let buildRows: SQLiteStatement
    private let buildMark: SQLiteStatement
    private let buildEnd: SQLiteStatement
    private let raiseVersion: SQLiteStatement
    private let connection: SQLiteConnection
    /// The copy of the facts in memory, brought along after each commit.
    private let facts: SearchFacts
    /// What the open transaction changed: each object's new facts (nil: taken out), and whether it
    /// emptied the index first.
    private var changes: [(Int, SearchFacts.Row?)] = []
    private var cleared = false

    /// Prepares the writer's statements on `connection`, the writer's own.
    init(connection: SQLiteConnection, facts: SearchFacts) throws(SQLiteError) {
        self.connection = connection
        self.facts = facts
        raiseVersion = try connection.prepare(
            "UPDATE search_version SET version = version + 1 WHERE id = 1 RETURNING version")
        deleteText = try connection.prepare("DELETE FROM search_text WHERE rowid = ?1")
        insertText = try connection.prepare(
            "INSERT INTO search_text (rowid, \(SearchDocument.columns.joined(separator: ", "))) "
                + "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)")
        deleteFacts = try connection.prepare("DELETE FROM search_facts WHERE object_id = ?1")
        insertFacts = try connection.prepare(
            """
            INSERT OR REPLACE INTO search_facts (object_id, department, classification, century, is_highlight,
                is_on_view, has_image, is_public_domain, begin_date, end_date, sort_title)
            VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)
            """)
        buildState = try connection.prepare("SELECT through FROM search_build WHERE id = 1")
        buildRows = try connection.prepare(
            "SELECT rowid, key, record FROM entries WHERE rowid > ?1 AND key GLOB ?2 ORDER BY rowid LIMIT ?3")
        buildMark = try connection.prepare("UPDATE search_build SET through = ?1 WHERE id = 1")
        buildEnd = try connection.prepare("DELETE FROM search_build")
    }

    /// Keeps the index in step with storing `entry` over a row of version `previous` (nil: no row,
    /// or an earlier build's; see `ChangeLog.version(of:)`), in the writer's open transaction. An
    /// object's record stored anew or changed is indexed; one stored again unchanged is left as
    /// it is; a 404 (or any other status) takes its object out. Other kinds are not indexed.
    func note(_ entry: CacheEntry, replacing previous: String?) throws(SQLiteError) {
        guard entry.kind == .object, let id = MetResource.objectID(inKey: entry.key) else { return }
        guard entry.status == 200 else { return try remove(objectID: id) }
        guard previous != entry.etag else { return }
        try index(entry.body, objectID: id)
    }

    /// Takes object `key`'s record out of the index, if it is an object's (a purge, an eviction,
    /// a damaged row). In the writer's open transaction.
    func removed(_ key: String) throws(SQLiteError) {
        guard let id = MetResource.objectID(inKey: key) else { return }
        try remove(objectID: id)
    }

    /// Indexes the record `body` of object `id`, replacing what was indexed; a body that is not a
    /// record of that object takes it out.
    private func index(_ body: [UInt8], objectID id: Int) throws(SQLiteError) {
        try deleteText.bind(.integer(Int64(id)))
        try deleteText.step()
        guard let document = SearchDocument(json: body), document.objectID == id else {
            try deleteFacts.bind(.integer(Int64(id)))
            try deleteFacts.step()
            changes.append((id, nil))
            return
        }
        try insertText.bind([.integer(Int64(id))] + document.columnValues.map(SQLiteValue.text))
        try insertText.step()
        func text(_ value: String?) -> SQLiteValue { value.map(SQLiteValue.text) ?? .null }
        func integer(_ value: Int?) -> SQLiteValue { value.map { .integer(Int64($0)) } ?? .null }
        func flag(_ value: Bool) -> SQLiteValue { .integer(value ? 1 : 0) }
        try insertFacts.bind(
            .integer(Int64(id)), text(document.department), text(document.classification), integer(document.century),
            flag(document.isHighlight), flag(document.isOnView), flag(document.hasImage),
            flag(document.isPublicDomain), integer(document.beginDate), integer(document.endDate),
            document.title.isEmpty ? .null : .text(document.title.lowercased()))
        try insertFacts.step()
        changes.append(
            (
                id,
                SearchFacts.Row(
                    department: document.department, classification: document.classification,
                    century: document.century, isHighlight: document.isHighlight, isOnView: document.isOnView,
                    hasImage: document.hasImage, isPublicDomain: document.isPublicDomain, begin: document.beginDate,
                    end: document.endDate)
            ))
    }

    private func remove(objectID id: Int) throws(SQLiteError) {
        try deleteText.bind(.integer(Int64(id)))
        try deleteText.step()
        try deleteFacts.bind(.integer(Int64(id)))
        try deleteFacts.step()
        changes.append((id, nil))
    }

    /// Ends the writer's transaction's part in the index, before its COMMIT: raises the index's
    /// version when the transaction changed it. Returns what to call once the commit is done (it
    /// brings the copy in memory along), or nil when nothing changed.
    func finishTransaction() throws(SQLiteError) -> (() -> Void)? {
        guard !changes.isEmpty || cleared else { return nil }
        defer { raiseVersion.reset() }
        guard try raiseVersion.step() else { return nil }
        let (version, changes, cleared) = (raiseVersion.integer(at: 0), changes, cleared)
        discardTransaction()
        return { [facts] in facts.apply(changes, cleared: cleared, version: version) }
    }

    /// Forgets what the transaction changed: it was rolled back.
    func discardTransaction() {
        changes = []
        cleared = false
    }

    /// Whether a build is under way (see the type's comment).
    func isBuilding() throws(SQLiteError) -> Bool {
        defer { buildState.reset() }
        return try buildState.step()
    }

    /// Indexes the next `buildStep` object rows of `entries` past the build's mark, in the
    /// writer's open transaction; ends the build when none are left. Returns how many it indexed,
    /// or nil when no build is under way. A row whose record does not restore (damaged) is passed
    /// over: its next read removes it.
    func buildNext() throws(SQLiteError) -> Int? {
        guard try buildState.step() else { return nil }
        let through = buildState.integer(at: 0)
        buildState.reset()
        try buildRows.bind(.integer(through), .text(Self.objectKeyPattern), .integer(Int64(Self.buildStep)))
        var last = through
        var rows: [(key: String, entry: CacheEntry?)] = []
        while try buildRows.step() {
            last = buildRows.integer(at: 0)
            let key = buildRows.text(at: 1)
            rows.append((key, buildRows.withBlob(at: 2) { CacheEntry.restored(record: $0, key: key) }))
        }
        for row in rows {
            guard let entry = row.entry else { continue }
            try note(entry, replacing: nil)
        }
        if rows.count < Self.buildStep {
            try buildEnd.step()
        } else {
            try buildMark.bind(.integer(last))
            try buildMark.step()
        }
        return rows.count
    }

    /// Empties the index and starts a build from the first row (`themet reindex`), in the
    /// writer's open transaction.
    func restart() throws(SQLiteError) {
        try connection.execute(
            """
            DELETE FROM search_text; DELETE FROM search_facts;
            INSERT OR REPLACE INTO search_build (id, through) VALUES (1, 0);
            """)
        changes = []
        cleared = true
    }

    /// What every object's key looks like, as a GLOB pattern (a build reads only those rows).
    static let objectKeyPattern = String(MetResource.object(id: 1).cacheKey.dropLast()) + "[1-9]*"
}
