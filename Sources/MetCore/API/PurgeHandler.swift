/// `DELETE /cache/objects/{id}` and `DELETE /cache/search?…`: removes cache keys from every tier,
/// once the router has let the client purge. Kept search pages made from a removed entry notice
/// it at their next use (the entry is no longer in memory) and are made again. A fetch already in
/// flight for a key may still store its answer after the purge. Any thread.
struct PurgeHandler: Sendable {
    let cache: MemoryCache
    let disk: (any PersistentTier)?
    let metrics: ServerMetrics

    /// Removes `keys`, in a task (the persistent tier looks each row up), and answers what was
    /// removed: `{"keys": […], "removedFromMemory": M, "removedFromDisk": D}`.
    func purge(_ keys: [String]) -> Answer {
        .suspended(
            Suspension { [cache, disk, metrics] in
                var inMemory = 0
                var onDisk = 0
                for key in keys {
                    if cache.remove(key) {
                        inMemory += 1
                        metrics.countPurged(.memory)
                    }
                    if disk?.remove(key) == true {
                        onDisk += 1
                        metrics.countPurged(.disk)
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
                json.endObject()
                return Response(
                    status: 200, headers: ["Content-Type": Response.jsonContentType, "Cache-Control": "no-store"],
                    body: json.bytes)
            })
    }
}
