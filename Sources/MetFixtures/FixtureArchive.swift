import Foundation
import MetCore
import MetEngine

/// The fake Met's data and its answers: saved real bodies from a fixture directory, plus
/// optional synthetic records, answered the way the Met Collection API answers
/// (docs/MET-API.md §2–5).
///
/// Directory layout (paths as on the Met's host, relative to `directory`):
/// - `public/collection/v1/objects/<id>.json`: object records, served byte for byte;
/// - `public/collection/v1/departments.json`: the `/departments` answer (required);
/// - `public/collection/v1/objects@<query>.json`: a saved `/objects` answer for exactly that
///   decoded query (`objects@departmentIds=3.json`);
/// - `withdrawn.json` (optional): an array of IDs that answer 404 "Not a valid object".
///
/// Everything is loaded once in `init`; afterwards the archive is immutable, so `answer` is safe
/// from any thread and never touches the disk. Search work is proportional to the number of
/// records (fixtures plus synthetic) per call.
public final class FixtureArchive: Sendable {
    /// The `Content-Type` of every JSON answer, spelt as the Met spells it.
    public static let contentType = "application/json; charset=UTF-8"

    /// The directory the fixtures came from, as given.
    public let directory: String
    /// Synthetic records answer for IDs `1...syntheticCount` that have no fixture.
    public let syntheticCount: Int
    /// The IDs of the fixture object files, ascending.
    public let fixtureObjectIDs: [Int]

    private let objects: [Int: [UInt8]]
    /// Index entries for the fixture objects, ascending by ID.
    private let records: [FixtureRecord]
    private let departmentsBody: [UInt8]
    private let knownDepartments: Set<Int>
    /// Saved `/objects` answers keyed by decoded query (`departmentIds=3`).
    private let savedLists: [String: [UInt8]]
    private let withdrawn: Set<Int>
    /// What synthetic lists leave out, ascending: IDs with a fixture, and withdrawn IDs.
    private let notListedSynthetic: [Int]
    private let synthetic: SyntheticCatalog
    /// The image host's paths (`/CRDImages/…`) that the fixture records name.
    private let recordImages: Set<String>

    private static let v1 = "/public/collection/v1"
    /// The Met's v1 search path: every hit in one answer.
    static let searchV1 = v1 + "/search"
    /// The Met's v1.1 search path: paged by `offset` and `limit`.
    static let searchV11 = "/public/collection/v1.1/search"

    /// Loads a fixture directory. Reads and decodes every file once; call it at start-up, not on
    /// a loop thread.
    ///
    /// - Parameters:
    ///   - directory: the folder holding `public/collection/v1` (the repository's `Fixtures`).
    ///   - syntheticCount: how many synthetic records to answer for (IDs 1…N); default 0.
    /// - Throws: `FixtureArchiveError` naming the folder or file at fault.
    /// - Precondition: `syntheticCount >= 0`.
    public init(directory: String, syntheticCount: Int = 0) throws {
        let files = FileManager.default
        let root = directory + Self.v1
        var isDirectory: ObjCBool = false
        guard files.fileExists(atPath: root, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw FixtureArchiveError.missingTree(directory: directory)
        }
        self.directory = directory
        self.syntheticCount = syntheticCount
        synthetic = SyntheticCatalog(count: syntheticCount)

        let departmentsPath = root + "/departments.json"
        departmentsBody = try Self.read(departmentsPath)
        let departments = try Self.decode(DepartmentList.self, from: departmentsBody, path: departmentsPath)
        var departmentIDs = MetDepartments.aliases
        for department in departments.departments { departmentIDs[department.displayName] = department.departmentId }
        knownDepartments = Set(departments.departments.map(\.departmentId))

        var objects: [Int: [UInt8]] = [:]
        var records: [FixtureRecord] = []
        var recordImages: Set<String> = []
        let objectsPath = root + "/objects"
        for name in try Self.jsonFiles(in: objectsPath) {
            let path = objectsPath + "/" + name
            guard let id = Int(name.dropLast(".json".count)) else {
                throw FixtureArchiveError.malformed(path: path, reason: "the file name is not an object ID")
            }
            let bytes = try Self.read(path)
            let fields = try Self.decode(FixtureRecord.Fields.self, from: bytes, path: path)
            guard fields.objectID == id else {
                throw FixtureArchiveError.malformed(path: path, reason: "objectID is not \(id)")
            }
            objects[id] = bytes
            let images = try Self.decode(ImageFields.self, from: bytes, path: path)
            for url in [images.primaryImage, images.primaryImageSmall].compactMap({ $0 })
                + (images.additionalImages ?? [])
            where url.hasPrefix(Self.imageHost) {
                recordImages.insert(String(url.dropFirst(Self.imageHost.count)))
            }
            records.append(FixtureRecord(fields, id: id, departmentID: fields.department.flatMap { departmentIDs[$0] }))
        }
        records.sort { $0.attributes.id < $1.attributes.id }
        self.objects = objects
        self.records = records
        self.recordImages = recordImages
        fixtureObjectIDs = records.map(\.attributes.id)

        var savedLists: [String: [UInt8]] = [:]
        for name in try Self.jsonFiles(in: root) where name.hasPrefix("objects@") {
            let path = root + "/" + name
            let bytes = try Self.read(path)
            _ = try Self.decode(IDList.self, from: bytes, path: path)
            savedLists[String(name.dropFirst("objects@".count).dropLast(".json".count))] = bytes
        }
        self.savedLists = savedLists

        let withdrawnPath = directory + "/withdrawn.json"
        if files.fileExists(atPath: withdrawnPath) {
            withdrawn = Set(try Self.decode([Int].self, from: try Self.read(withdrawnPath), path: withdrawnPath))
        } else {
            withdrawn = []
        }
        notListedSynthetic = withdrawn.union(fixtureObjectIDs).sorted()
    }

    /// Answers `GET path?query` as the Met would. Pure and thread-safe; see the type's notes for
    /// the routes. Search and lists take time proportional to the number of records.
    ///
    /// - Parameters:
    ///   - path: the decoded path, such as `/public/collection/v1/objects/436535`.
    ///   - query: the decoded query items in the order sent.
    /// - Returns: status, `Content-Type` and body bytes (not compressed).
    public func answer(path: String, query: [RequestTarget.QueryItem]) -> UpstreamReply {
        switch path {
        case Self.v1 + "/departments": return Self.json(200, departmentsBody)
        case Self.v1 + "/objects": return list(query)
        case Self.searchV1: return search(query, paged: false)
        case Self.searchV11: return search(query, paged: true)
        default:
            let objectPrefix = Self.v1 + "/objects/"
            if path.hasPrefix(objectPrefix), !path.dropFirst(objectPrefix.count).contains("/") {
                return object(path.dropFirst(objectPrefix.count))
            }
            return Self.message(404, "Not Found")
        }
    }

    // MARK: Routes

    /// `/objects/{id}`: withdrawn IDs first, then fixtures, then synthetic records.
    private func object(_ text: Substring) -> UpstreamReply {
        guard !text.isEmpty else { return Self.message(404, "ObjectID not found") }
        guard let id = Int(text) else { return Self.message(400, "could not parse objectID") }
        if withdrawn.contains(id) { return Self.message(404, "Not a valid object") }
        if let bytes = objects[id] { return Self.json(200, bytes) }
        if synthetic.contains(id) { return Self.json(200, synthetic.body(for: id)) }
        return Self.message(404, "ObjectID not found")
    }

    /// `/objects?departmentIds=…&metadataDate=…`: a saved answer for exactly this query, else the
    /// matching IDs ascending. Withdrawn IDs are never listed. `metadataDate` keeps records
    /// changed at or after 00:00 UTC on that day.
    private func list(_ query: [RequestTarget.QueryItem]) -> UpstreamReply {
        var changedSince: Int?
        if let date = FixtureSearch.lastValue(of: "metadataDate", in: query) {
            guard let day = Self.day(date) else {
                return UpstreamReply(status: 400, contentType: Self.contentType, body: Self.badDateBody)
            }
            changedSince = day
        }
        let key = query.map { "\($0.name)=\($0.value)" }.joined(separator: "&")
        if let saved = savedLists[key] { return Self.json(200, saved) }

        let departments = FixtureSearch.lastValue(of: "departmentIds", in: query).map {
            Set($0.split(separator: "|").compactMap { Int($0) })
        }
        let fromFixtures = records.filter { record in
            if withdrawn.contains(record.attributes.id) { return false }
            if let departments {
                guard let department = record.attributes.departmentID, departments.contains(department) else {
                    return false
                }
            }
            if let changedSince {
                guard let day = Self.day(String(record.metadataDate.prefix(10))), day >= changedSince else {
                    return false
                }
            }
            return true
        }.map(\.attributes.id)
        let fromSynthetic = synthetic.list(
            departments: departments, changedSince: changedSince, skipping: notListedSynthetic)
        let ids = Self.merge(fromFixtures, fromSynthetic)
        return Self.json(200, Self.idList(total: ids.count, ids: ids[...]))
    }

    /// `/v1/search` (every hit in one answer) and `/v1.1/search` (paged by `offset`/`limit`).
    /// Hits whose title contains `q` come first, then the rest, each ascending by ID.
    private func search(_ query: [RequestTarget.QueryItem], paged: Bool) -> UpstreamReply {
        let q = FixtureSearch.lastValue(of: "q", in: query)
        let search = FixtureSearch(query, knownDepartments: knownDepartments)
        if !paged {
            // v1 needs q: without it the Met answers 502 (or 503); with an empty one, nothing
            // (S-PA), unless a filter narrows the search: `q=&isHighlight=true` finds the
            // highlights (OA#36).
            guard let q else {
                return UpstreamReply(status: 502, contentType: "text/html", body: Array(Self.badGatewayPage.utf8))
            }
            if q.isEmpty && !search.narrows { return Self.json(200, Self.idList(total: 0, ids: nil)) }
        }
        var titleMatches: [Int] = []
        var otherMatches: [Int] = []
        for record in records {
            switch search.placement(of: record.attributes, hits: search.hits(in: record.fields)) {
            case .titleMatch: titleMatches.append(record.attributes.id)
            case .otherMatch: otherMatches.append(record.attributes.id)
            case nil: break
            }
        }
        var syntheticTitleMatches: [Int] = []
        var syntheticOtherMatches: [Int] = []
        synthetic.search(
            search, skipping: fixtureObjectIDs, titleMatches: &syntheticTitleMatches,
            otherMatches: &syntheticOtherMatches)
        let ids =
            Self.merge(titleMatches, syntheticTitleMatches) + Self.merge(otherMatches, syntheticOtherMatches)

        guard paged else { return Self.json(200, Self.idList(total: ids.count, ids: ids.isEmpty ? nil : ids[...])) }
        let offset = max(0, Int(FixtureSearch.lastValue(of: "offset", in: query) ?? "") ?? 0)
        var limit = Int(FixtureSearch.lastValue(of: "limit", in: query) ?? "") ?? Self.defaultPageSize
        if limit <= 0 { limit = Self.defaultPageSize }
        limit = min(limit, Self.maximumPageSize)
        let pageable = min(ids.count, Self.pageableHits)
        guard offset < pageable else { return Self.json(200, Self.idList(total: ids.count, ids: nil)) }
        return Self.json(200, Self.idList(total: ids.count, ids: ids[offset..<min(offset + limit, pageable)]))
    }

    /// v1.1 page size when `limit` is absent, zero or negative.
    private static let defaultPageSize = 100
    /// v1.1 caps `limit` here, without an error.
    private static let maximumPageSize = 500
    /// v1.1 pages only through the first this-many hits.
    private static let pageableHits = 10_000

    // MARK: Bodies

    /// The bare JSON string the Met sends for a malformed `metadataDate`.
    private static let badDateBody = Array(
        #""Date not valid. Dates must be in the format YYYY-MM-DD e.g. 1987-05-03""#.utf8)

    private static let badGatewayPage =
        "<html><head><title>502 Bad Gateway</title></head><body><center><h1>502 Bad Gateway</h1></center></body></html>"

    private static func json(_ status: Int, _ body: [UInt8]) -> UpstreamReply {
        UpstreamReply(status: status, contentType: contentType, body: body)
    }

    /// `{"message":"…"}` with `status`.
    static func message(_ status: Int, _ text: String) -> UpstreamReply {
        var json = JSONWriter()
        json.beginObject()
        json.member("message", string: text)
        json.endObject()
        return Self.json(status, json.bytes)
    }

    /// `{"total":N,"objectIDs":[…]}`, or `"objectIDs":null` when `ids` is nil.
    private static func idList(total: Int, ids: ArraySlice<Int>?) -> [UInt8] {
        var json = JSONWriter()
        json.beginObject()
        json.member("total", int: total)
        json.key("objectIDs")
        if let ids {
            json.beginArray()
            for id in ids { json.int(id) }
            json.endArray()
        } else {
            json.null()
        }
        json.endObject()
        return json.bytes
    }

    // MARK: Helpers

    /// Parses `YYYY-MM-DD` (a real calendar day) into `yyyymmdd`; nil for anything else.
    static func day(_ text: String) -> Int? {
        CalendarDate(parsing: text).map { $0.year * 10_000 + $0.month * 100 + $0.day }
    }

    /// Merges two ascending ID lists into one.
    private static func merge(_ first: [Int], _ second: [Int]) -> [Int] {
        if first.isEmpty { return second }
        if second.isEmpty { return first }
        var merged: [Int] = []
        merged.reserveCapacity(first.count + second.count)
        var i = 0
        var j = 0
        while i < first.count && j < second.count {
            if first[i] <= second[j] {
                merged.append(first[i])
                i += 1
            } else {
                merged.append(second[j])
                j += 1
            }
        }
        merged.append(contentsOf: first[i...])
        merged.append(contentsOf: second[j...])
        return merged
    }

    /// The image host's origin, as records name it.
    static let imageHost = "https://images.metmuseum.org"

    /// Whether the image host holds the picture at `path` (`/CRDImages/{code}/{rendition}/{file}`):
    /// one a fixture or synthetic record names, or one of `FixtureImages.specimens`.
    public func hasImage(_ path: String) -> Bool {
        if recordImages.contains(path) || FixtureImages.specimens[path] != nil { return true }
        let parts = path.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 5, parts[0].isEmpty, parts[1] == "CRDImages" else { return false }
        return synthetic.hasImage(code: parts[2], rendition: parts[3], file: parts[4])
    }

    /// The image fields of a record.
    private struct ImageFields: Decodable {
        var primaryImage: String?
        var primaryImageSmall: String?
        var additionalImages: [String]?
    }

    private static func read(_ path: String) throws(FixtureArchiveError) -> [UInt8] {
        guard let data = FileManager.default.contents(atPath: path) else { throw .unreadable(path: path) }
        return [UInt8](data)
    }

    /// The `.json` file names in `folder`, sorted; none when the folder does not exist.
    private static func jsonFiles(in folder: String) throws(FixtureArchiveError) -> [String] {
        guard FileManager.default.fileExists(atPath: folder) else { return [] }
        do {
            return try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.hasSuffix(".json") }.sorted()
        } catch {
            throw .unreadable(path: folder)
        }
    }

    private static func decode<Value: Decodable>(
        _ type: Value.Type, from bytes: [UInt8], path: String
    ) throws(FixtureArchiveError) -> Value {
        do {
            return try JSONDecoder().decode(type, from: Data(bytes))
        } catch {
            throw .malformed(path: path, reason: "\(error)")
        }
    }

    /// The `/departments` body, decoded only to learn the IDs and names.
    private struct DepartmentList: Decodable {
        struct Department: Decodable {
            var departmentId: Int
            var displayName: String
        }
        var departments: [Department]
    }

    /// The shape of a saved `/objects` answer, checked at load time.
    private struct IDList: Decodable {
        var total: Int
        var objectIDs: [Int]
    }
}
