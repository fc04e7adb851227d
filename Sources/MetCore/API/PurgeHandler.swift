import MetEngine

/// `DELETE /cache/objects/{id}` and `DELETE /cache/search?…`: removes cache keys from every tier,
/// once the router has let the client purge; with a shared tier, every other instance of the group
/// drops its local copies too (`dropLocally`, on their notice). Kept search pages made from a removed entry notice
/// it at their next use (the entry is no longer in memory) and are made again. A fetch already in
/// flight for a key may still store its answer after the purge. Any thread.
struct PurgeHandler: Sendable {
    let cache: MemoryCache
    let disk: (any PersistentTier)?
    let shared: (any SharedTier)?
    let metrics: ServerMetrics

    /// Removes `keys`, in a task (the persistent tier looks each row up), and answers what was
    /// removed: `{"keys": […], "removedFromMemory": M, "removedFromDisk": D, "removedFromRedis": R}`
    /// (R null without a shared tier, or when it was unavailable: the other instances then keep
    /// their copies until they expire).
    func purge(_ keys: [String]) -> Answer {
        .suspended(
            Suspension { [cache, disk, shared, metrics] in
                var inMemory = 0
                var onDisk = 0
                var inShared: Int? = shared == nil ? nil : 0
                for key in keys {
                    if cache.remove(key) {
                        inMemory += 1
                        metrics.countPurged(.memory)
                    }
                    if disk?.remove(key) == true {
                        onDisk += 1
                        metrics.countPurged(.disk)
                    }
                    // Last: its notice reaches this instance too, and must find nothing left here.
                    if let shared {
                        switch await shared.remove(key) {
                        case true?: inShared? += 1
                        case false?: break
                        case nil: inShared = nil
                        }
                    }
                }
                var json = JSONWriter()
                json.beginObject()
                json.key("keys")
                json.beginArray()
                for key in keys { json.string(key) }
                json.endArray()
                json.member("removedFromMemory", int: inMemory)
                json.member("removedFromDisk", int: onDisk)
                json.key("removedFromRedis")
                if let inShared { json.int(inShared) } else { json.null() }
                json.endObject()
                return Response(
                    status: 200, headers: ["Content-Type": Response.jsonContentType, "Cache-Control": "no-store"],
                    body: json.bytes)
            })
    }

    /// Drops `key` from the local tiers, for a purge another instance of the group announced. On the
    /// shared tier's thread: the persistent tier's removal (a row lookup) runs in a task.
    func dropLocally(_ key: String) {
        if cache.remove(key) { metrics.countPurged(.memory) }
        guard let disk else { return }
        Task { if disk.remove(key) { metrics.countPurged(.disk) } }
    }
}
