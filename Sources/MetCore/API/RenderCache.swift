import MetEngine
import Synchronization

/// Bodies rendered from several cache entries (a `/search` page, a widget timeline), kept and
/// shared until what they were rendered from changes: the key names every input byte for byte
/// (the request's canonical parameters and the ETags of the entries, or the store's version), so
/// a changed entry or store makes a new key and the old render is never served for it. Renders can
/// also be kept for the request they answer (`Request`, a value equal for requests that render the
/// same way), with what they were made from. Any thread.
///
/// Bounded in bytes, in two generations of at most half the capacity each: what is stored or used
/// goes into the newer; when it is full it becomes the older and the older is dropped. A render
/// used while in the older generation moves back into the newer, so what is used stays, and what
/// went unused for a generation's worth of new renders goes (an approximation of least recently
/// used that costs a lookup and, for an older render, one move; no list to relink on each hit).
final class RenderCache<Request: Hashable & Sendable>: Sendable {
    /// One rendered body with its gzip copy.
    final class Rendered: Sendable {
        let body: [UInt8]
        let etag: String
        /// `body` gzip-compressed when it is worth it (see `CacheEntry.gzipThreshold`).
        let gzipped: [UInt8]?
        let gzippedETag: String?
        /// The `Link` field sent with it (a `/search` page's `rel="next"`), a function of its key.
        let link: String?
        /// What its shared responses are kept by (`HitResponseTable`).
        let serial = HitResponseTable.nextSerial()

        init(body: [UInt8], etag: String, link: String? = nil, compress: (@Sendable ([UInt8]) -> [UInt8])?) {
            self.body = body
            self.etag = etag
            self.link = link
            if body.count >= CacheEntry.gzipThreshold, let compressed = compress?(body), compressed.count < body.count {
                gzipped = compressed
                gzippedETag = CacheEntry.gzippedETag(of: etag)
            } else {
                gzipped = nil
                gzippedETag = nil
            }
        }

        var cost: Int { body.count + (gzipped?.count ?? 0) + etag.utf8.count + (link?.utf8.count ?? 0) + 160 }
    }

    /// A render kept for the request it answers, with the entries it was made from, in order.
    /// While memory still holds these very entries, fresh, the render is what rendering again
    /// would make, byte for byte. It holds the entries too, so it is charged their cost: an entry
    /// memory has dropped lives on until its kept renders go.
    final class Kept: Sendable {
        let rendered: Rendered
        let entries: [CacheEntry]
        /// The second of the clock in which the entries were last looked up by key.
        private let touched = Atomic<Int>(Int.min)

        init(_ rendered: Rendered, madeFrom entries: [CacheEntry]) {
            self.rendered = rendered
            self.entries = entries
        }

        var cost: Int { entries.reduce(rendered.cost) { $0 + $1.cost + 16 } }

        /// Whether a check at `now` should look the entries up by key, marking them recently used
        /// in memory (the first check of each second of the clock), rather than read their flags:
        /// so entries used only through this render still age in memory as used ones do.
        func touches(at now: Double) -> Bool {
            let second = Int(now.rounded(.down))
            return touched.exchange(second, ordering: .relaxed) != second
        }
    }

    /// What one generation holds, and its bytes (a kept request's render counted again).
    private struct Generation {
        var renders: [String: Rendered] = [:]
        var kept: [Request: Kept] = [:]
        var bytes = 0
    }

    private struct State {
        var newer = Generation()
        var older = Generation()
        /// The most bytes of one generation: half the capacity.
        let limit: Int

        /// The render for `key`, moved into the newer generation if it was in the older.
        mutating func render(_ key: String) -> Rendered? {
            if let rendered = newer.renders[key] { return rendered }
            guard let rendered = older.renders.removeValue(forKey: key) else { return nil }
            older.bytes -= Self.cost(of: rendered, key)
            store(rendered, key)
            return rendered
        }

        /// The render kept for `request`, moved into the newer generation if it was in the older.
        mutating func kept(_ request: Request) -> Kept? {
            if let kept = newer.kept[request] { return kept }
            guard let kept = older.kept.removeValue(forKey: request) else { return nil }
            older.bytes -= Self.cost(of: kept)
            keep(kept, request)
            return kept
        }

        /// Stores `rendered` under `key` in the newer generation, replacing any under it there.
        mutating func store(_ rendered: Rendered, _ key: String) {
            let cost = Self.cost(of: rendered, key)
            admit(cost)
            if newer.renders.updateValue(rendered, forKey: key) == nil { newer.bytes += cost }
        }

        /// Keeps `kept` for `request` in the newer generation, replacing any kept for it in either.
        mutating func keep(_ kept: Kept, _ request: Request) {
            let cost = Self.cost(of: kept)
            if let replaced = older.kept.removeValue(forKey: request) { older.bytes -= Self.cost(of: replaced) }
            admit(cost)
            if let replaced = newer.kept.updateValue(kept, forKey: request) { newer.bytes -= Self.cost(of: replaced) }
            newer.bytes += cost
        }

        /// Makes room for `cost` more bytes in the newer generation: when they do not fit, it
        /// becomes the older and the older is dropped.
        private mutating func admit(_ cost: Int) {
            guard newer.bytes + cost > limit else { return }
            older = newer
            newer = Generation()
        }

        static func cost(of rendered: Rendered, _ key: String) -> Int { rendered.cost + key.utf8.count }

        /// What a kept request is charged: its render and entries, and an estimate of the request
        /// value and its place in the table.
        static func cost(of kept: Kept) -> Int { kept.cost + MemoryLayout<Request>.size + 128 }
    }

    private let state: Locked<State>
    private let capacity: Int
    private let compress: (@Sendable ([UInt8]) -> [UInt8])?

    /// - Parameters:
    ///   - capacity: the most bytes of renders (keys, bodies and gzip copies) kept.
    ///   - compress: gzip, called once per render, on the thread that renders; nil: identity only.
    init(capacity: Int, compress: (@Sendable ([UInt8]) -> [UInt8])?) {
        self.capacity = capacity
        self.compress = compress
        state = Locked(State(limit: capacity / 2))
    }

    /// The render for `key`, made by `render` (body and ETag) the first time, with a gzip copy
    /// when `gzip` and `link` as its `Link` field. Two threads asking at once may both render;
    /// either copy is kept, and both are the same bytes. The key must name the gzip choice and the
    /// link too when a caller varies them.
    func rendered(
        _ key: String, gzip: Bool, link: String? = nil, render: () -> (body: [UInt8], etag: String)
    ) -> Rendered {
        if let kept = state.withLock({ $0.render(key) }) { return kept }
        let made = render()
        let rendered = Rendered(body: made.body, etag: made.etag, link: link, compress: gzip ? compress : nil)
        guard State.cost(of: rendered, key) <= capacity / 4 else { return rendered }
        state.withLock { $0.store(rendered, key) }
        return rendered
    }

    /// The render kept for `request`, if any; the caller checks that it still holds.
    func kept(for request: Request) -> Kept? {
        state.withLock { $0.kept(request) }
    }

    /// Keeps `kept` as the answer to `request` (which names everything the render depends on
    /// besides its entries), replacing any kept before.
    func keep(_ kept: Kept, for request: Request) {
        guard State.cost(of: kept) <= capacity / 4 else { return }
        state.withLock { $0.keep(kept, request) }
    }

    /// Renders kept, and their bytes, in both generations (for tests).
    var figures: (renders: Int, bytes: Int) {
        state.withLock { ($0.newer.renders.count + $0.older.renders.count, $0.newer.bytes + $0.older.bytes) }
    }
}
