import MetEngine

/// The members the routes that send several records share (`/search`, `/objects?ids=`).
extension JSONWriter {
    /// `name`: an array of the entries' records, byte for byte, or their projection to `fields`
    /// (a body that cannot be projected is sent whole).
    mutating func records(_ name: String, _ entries: [CacheEntry], fields: Set<String>?) {
        key(name)
        beginArray()
        for entry in entries {
            if let fields, let projected = JSONProjection.project(entry.body, fields: fields) {
                raw(projected)
            } else {
                raw(entry.body)
            }
        }
        endArray()
    }

    /// `name`: an array of object IDs.
    mutating func ids(_ name: String, _ ids: [Int]) {
        key(name)
        beginArray()
        for id in ids { int(id) }
        endArray()
    }
}
