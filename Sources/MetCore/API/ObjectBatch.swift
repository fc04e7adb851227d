import MetEngine

/// A validated `/objects?ids=…` request: several object records in one request (what the Met
/// has been asked for since 2019, its tracker's #17), through the same cache and single flight as
/// `/objects/{id}`.
struct ObjectBatch: Sendable {
    /// The IDs asked for, in the order asked, each once (a repeat keeps its first place).
    var ids: [Int]
    /// Members to keep in each record, or nil for whole records.
    var fields: Set<String>?
    /// How long to wait for uncached records before answering with `pending`, in seconds.
    var wait: Double

    /// The most IDs one request may name.
    static let maxCount = 100
    /// Every parameter the route takes.
    static let parameters: Set<String> = ["ids", "fields", "wait"]

    init(_ target: RequestTarget) throws(Problem) {
        try target.allowOnly(Self.parameters)
        let usage = "ids must be 1 to \(Self.maxCount) object IDs joined by commas, such as 436535,45734,1"
        guard let text = target.value(of: "ids") else {
            throw Problem(.invalidParameter, "ids is required: \(usage).", parameter: "ids")
        }
        let parts = text.split(separator: ",", omittingEmptySubsequences: false)
        guard (1...Self.maxCount).contains(parts.count) else {
            throw Problem(.invalidParameter, "\(usage); got \(parts.count).", parameter: "ids")
        }
        var seen = Set<Int>()
        ids = []
        for part in parts {
            let id: Int
            do {
                id = try ObjectID.parse(String(part))
            } catch {
                throw Problem(.invalidParameter, "\(usage); '\(part.prefix(40))' is not one.", parameter: "ids")
            }
            if seen.insert(id).inserted { ids.append(id) }
        }
        fields = try target.value(of: "fields").map { (text) throws(Problem) in try FieldList(parsing: text).names }
        wait = try WaitParameter.seconds(target.value(of: "wait"))
    }

    /// The body's format: part of the render key (and so of the ETag), and changed with the
    /// body's shape, so that a client does not keep a body of an older build after a 304.
    static let format = 1

    /// What the body is a function of besides the entries: its format, the IDs in order and the
    /// projection.
    var renderKey: String {
        "batch \(Self.format)|" + ids.map(String.init).joined(separator: ",") + "|"
            + (fields?.sorted().joined(separator: ",") ?? "")
    }
}
