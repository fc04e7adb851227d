import MetEngine
import Synchronization

/// Bodies rendered from several cache entries (a `/search` page, a widget timeline), kept and
/// shared until what they were rendered from changes: the key names every input byte for byte
/// (the request's canonical parameters and the ETags of the entries, or the store's version), so
/// a changed entry or store makes a new key and the old render is never served for it. Renders can
/// also be kept for the request they answer (`Request`, a value equal for requests that render the
/// same way), with what they were made from. Bounded in bytes: when full, it starts afresh (each
/// render is then made once again). Any thread.
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

    private struct State {
        var renders: [String: Rendered] = [:]
        /// By request (see `keep(_:for:)`); the renders they hold are counted in `bytes` again.
        var kept: [Request: Kept] = [:]
        var bytes = 0

        /// Makes room for `cost` more bytes within `capacity`, starting afresh when full.
        mutating func admit(_ cost: Int, capacity: Int) {
            guard bytes + cost > capacity else { return }
            renders.removeAll(keepingCapacity: true)
            kept.removeAll(keepingCapacity: true)
            bytes = 0
        }
    }

    private let state = Locked(State())
    private let capacity: Int
    private let compress: (@Sendable ([UInt8]) -> [UInt8])?

    /// - Parameters:
    ///   - capacity: the most bytes of renders (keys, bodies and gzip copies) kept.
    ///   - compress: gzip, called once per render, on the thread that renders; nil: identity only.
    init(capacity: Int, compress: (@Sendable ([UInt8]) -> [UInt8])?) {
        self.capacity = capacity
        self.compress = compress
    }

    /// The render for `key`, made by `render` (body and ETag) the first time, with a gzip copy
    /// when `gzip` and `link` as its `Link` field. Two threads asking at once may both render;
    /// either copy is kept, and both are the same bytes. The key must name the gzip choice and the
    /// link too when a caller varies them.
    func rendered(
        _ key: String, gzip: Bool, link: String? = nil, render: () -> (body: [UInt8], etag: String)
    ) -> Rendered {
        if let kept = state.withLock({ $0.renders[key] }) { return kept }
        let made = render()
        let rendered = Rendered(body: made.body, etag: made.etag, link: link, compress: gzip ? compress : nil)
        let cost = rendered.cost + key.utf8.count
        guard cost <= capacity / 4 else { return rendered }
        state.withLock { state in
            state.admit(cost, capacity: capacity)
            if state.renders.updateValue(rendered, forKey: key) == nil { state.bytes += cost }
        }
        return rendered
    }

    /// The render kept for `request`, if any; the caller checks that it still holds.
    func kept(for request: Request) -> Kept? {
        state.withLock { $0.kept[request] }
    }

    /// Keeps `kept` as the answer to `request` (which names everything the render depends on
    /// besides its entries), replacing any kept before.
    func keep(_ kept: Kept, for request: Request) {
        let cost = kept.cost + Self.requestCost
        guard cost <= capacity / 4 else { return }
        state.withLock { state in
            state.admit(cost, capacity: capacity)
            if let replaced = state.kept.updateValue(kept, forKey: request) {
                state.bytes -= replaced.cost + Self.requestCost
            }
            state.bytes += cost
        }
    }

    /// What a kept request is charged: an estimate of its value and its place in the table.
    private static var requestCost: Int { MemoryLayout<Request>.size + 128 }

    /// Renders kept, and their bytes (for tests).
    var figures: (renders: Int, bytes: Int) { state.withLock { ($0.renders.count, $0.bytes) } }
}
