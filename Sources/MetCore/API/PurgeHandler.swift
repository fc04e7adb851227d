import MetEngine

/// `DELETE /cache/objects/{id}` and `DELETE /cache/search?…`, once the router has let the client
/// purge: removes cache keys from every tier, or with `soft` marks their copies expired in every
/// tier. With a shared tier, every other instance of the group does the same to its local copies
/// (`dropLocally` or `expireLocally`, on their notice). Kept search pages made from a removed entry
/// notice it at their next use (the entry is no longer in memory, or no longer fresh) and are made
/// again. A fetch already in flight for a key may still store its answer after the purge. Any thread.
struct PurgeHandler: Sendable {
    let cache: MemoryCache
    let disk: (any PersistentTier)?
    let shared: (any SharedTier)?
    let metrics: ServerMetrics
    let time: any TimeSource

    /// Removes `keys`, or marks them expired when `soft`, in a task (the persistent tier looks each
    /// row up), and answers what was done: `{"keys": […], "removedFromMemory": M,
    /// "removedFromDisk": D, "removedFromRedis": R}`, or for a soft purge `{"keys": […],
    /// "soft": true, "expiredInMemory": M, "expiredOnDisk": D, "expiredInRedis": R}` (R null
    /// without a shared tier, or when it was unavailable: the other instances then keep their
    /// copies as they are until they expire).
    func purge(_ keys: [String], soft: Bool) -> Answer {
        .suspended(
            Suspension { [self] in
                let (inMemory, onDisk, inShared) = soft ? await expire(keys) : await remove(keys)
                var json = JSONWriter()
                json.beginObject()
                json.key("keys")
                json.beginArray()
                for key in keys { json.string(key) }
                json.endArray()
                if soft { json.member("soft", bool: true) }
                json.member(soft ? "expiredInMemory" : "removedFromMemory", int: inMemory)
                json.member(soft ? "expiredOnDisk" : "removedFromDisk", int: onDisk)
                json.key(soft ? "expiredInRedis" : "removedFromRedis")
                if let inShared { json.int(inShared) } else { json.null() }
                json.endObject()
                return Response(
                    status: 200, headers: ["Content-Type": Response.jsonContentType, "Cache-Control": "no-store"],
                    body: json.bytes)
            })
    }

    /// Removes `keys` from every tier; how many each tier held (the shared tier's nil when there is
    /// none, or it was unavailable).
    private func remove(_ keys: [String]) async -> (memory: Int, disk: Int, shared: Int?) {
        var counts: (memory: Int, disk: Int, shared: Int?) = (0, 0, shared == nil ? nil : 0)
        for key in keys {
            if cache.remove(key) {
                counts.memory += 1
                metrics.countPurged(.memory)
            }
            if disk?.remove(key) == true {
                counts.disk += 1
                metrics.countPurged(.disk)
            }
            // Last: its notice reaches this instance too, and must find nothing left here.
            if let shared {
                switch await shared.remove(key) {
                case true?: counts.shared? += 1
                case false?: break
                case nil: counts.shared = nil
                }
            }
        }
        return counts
    }

    /// Marks `keys` expired in every tier; how many copies each tier held.
    private func expire(_ keys: [String]) async -> (memory: Int, disk: Int, shared: Int?) {
        var counts: (memory: Int, disk: Int, shared: Int?) = (0, 0, shared == nil ? nil : 0)
        let now = time.now()
        for key in keys {
            if let shared {
                switch await shared.expire(key, at: now) {
                case true?: counts.shared? += 1
                case false?: break
                case nil: counts.shared = nil
                }
            }
            let local = expireLocally(key, at: now)
            if local.memoryLastUse != nil { counts.memory += 1 }
            if local.onDisk { counts.disk += 1 }
        }
        return counts
    }

    /// Where `expireLocally` found copies of a key.
    struct LocalCopies {
        /// The memory tier's copy's last use (larger: more recent), when memory held one.
        var memoryLastUse: Int?
        /// Whether the persistent tier held a row.
        var onDisk = false
    }

    /// Marks the local copies of `key` expired at `now` (seconds since 1970), each tier's own, its
    /// stale windows kept: a request then refreshes it, and while the upstream cannot answer the
    /// copy still stands in. A copy already expired is left as it is. The persistent tier's row
    /// first: a request that misses memory meanwhile reads the expired row, not the fresh one back
    /// into memory after memory's was marked. Reads the persistent tier: in a task, never on a loop
    /// thread.
    func expireLocally(_ key: String, at now: Double) -> LocalCopies {
        var copies = LocalCopies()
        if let disk, let entry = disk.entry(for: key) {
            if entry.isFresh(at: now) { disk.store(entry.expired(at: now)) }
            copies.onDisk = true
        }
        copies.memoryLastUse = expireInMemory(key, at: now)
        return copies
    }

    /// Marks memory's copy of `key` expired at `now`; its last use when memory held one.
    private func expireInMemory(_ key: String, at now: Double) -> Int? {
        guard let (entry, lastUse) = cache.peek(key) else { return nil }
        if entry.isFresh(at: now) { cache.store(entry.expired(at: now)) }
        return lastUse
    }

    /// Marks the local copies of `key` expired, for an expiry another instance of the group
    /// announced. On the shared tier's thread: memory's copy at once, then in a task the
    /// persistent tier's row (a row lookup) and memory's copy again, which a request in between
    /// may have read back from the row.
    func expireLocallySoon(_ key: String, at now: Double) {
        _ = expireInMemory(key, at: now)
        guard disk != nil else { return }
        Task { _ = expireLocally(key, at: now) }
    }

    /// Drops `key` from the local tiers, for a purge another instance of the group announced. On the
    /// shared tier's thread: memory's copy at once, then in a task the persistent tier's row (a row
    /// lookup) and memory's copy again, which a request in between may have read back from the row.
    func dropLocally(_ key: String) {
        if cache.remove(key) { metrics.countPurged(.memory) }
        guard let disk else { return }
        Task {
            if disk.remove(key) { metrics.countPurged(.disk) }
            _ = cache.remove(key)
        }
    }
}
