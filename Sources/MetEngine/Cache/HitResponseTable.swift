import Foundation
import Synchronization

/// The responses to plain hits, kept for the entries (and renders) hit lately (see
/// `Presenter.hit`): a bounded table, not a box in every entry, so that a record fetched once costs
/// nothing here and a record hit once keeps nothing once its slot is taken.
///
/// Two-way set-associative: an entry's serial (`nextSerial`) picks a set of two slots; an entry
/// that finds neither holding it takes the one used less lately. Two hot entries of one set share
/// it without loss; a third costs the least recent of them a response made anew, never a wrong one:
/// a slot is matched by serial, which no other entry has (an address would be reused).
///
/// A kept response holds its entry's bytes, not the entry: a slot whose entry left memory keeps its
/// body alive until the slot is taken, at most `sets × 2` bodies in all. Any thread: each set is
/// read and written under one of `stripes` locks, never while a response is made.
package final class HitResponseTable: @unchecked Sendable {
    private struct Slot {
        /// The serial of the entry whose responses these are; 0 for none.
        var owner: UInt64 = 0
        /// Whether this is the slot of its set that was used last.
        var usedLast = false
        var responses = HitResponses()
    }

    private let setMask: UInt64
    private let setBits: UInt64
    /// `sets × 2` slots, set `s` in slots `2s` and `2s + 1`; freed in `deinit`.
    private let slots: UnsafeMutablePointer<Slot>
    private let count: Int
    private let locks: [NSLock]

    private static let serials = Atomic<UInt64>(0)

    /// A number no other caller of this process gets (from 1 up): what an entry or a render is
    /// known by here.
    package static func nextSerial() -> UInt64 {
        serials.wrappingAdd(1, ordering: .relaxed).newValue
    }

    /// Sets of two slots guarded by each lock: few enough locks to allocate once, enough that two
    /// loop threads rarely wait on each other.
    private static let stripes = 64

    /// - Parameter sets: a power of two; the table keeps the responses of at most twice as many
    ///   entries.
    package init(sets: Int) {
        precondition(sets > 0 && sets & (sets - 1) == 0, "sets must be a power of two")
        setMask = UInt64(sets - 1)
        setBits = UInt64(sets.trailingZeroBitCount)
        count = sets * 2
        slots = .allocate(capacity: count)
        slots.initialize(repeating: Slot(), count: count)
        locks = (0..<min(sets, Self.stripes)).map { _ in NSLock() }
    }

    deinit {
        slots.deinitialize(count: count)
        slots.deallocate()
    }

    /// The response kept for the entry or render numbered `serial` at `second`, `age`, `ttl` and `variant` (its gzip form when
    /// `gzip`), or the one `make` makes, then kept and marked shared (`Response.shared`). `variant`
    /// names whatever else of the request the response shows (a IIIF answer's base URI, which its
    /// link holds with the request's host): a request of another variant makes its own and
    /// replaces the kept one. `make` runs without any lock held.
    package func response(
        for serial: UInt64, second: Int, age: Int, ttl: Int, gzip: Bool, variant: String = "",
        make: () -> Response
    ) -> Response {
        let set = Int(truncatingIfNeeded: (serial &* 0x9E37_79B9_7F4A_7C15) >> (64 - setBits) & setMask)
        let lock = locks[set % locks.count]
        let first = slots + 2 * set
        lock.lock()
        for way in 0..<2 where first[way].owner == serial {
            first[way].usedLast = true
            first[1 - way].usedLast = false
            if first[way].responses.holds(second: second, age: age, ttl: ttl, variant: variant),
                let kept = gzip ? first[way].responses.gzipped : first[way].responses.identity
            {
                lock.unlock()
                return kept
            }
        }
        lock.unlock()

        var response = make()
        response.shared = SharedResponse()
        lock.lock()
        defer { lock.unlock() }
        let way =
            first[0].owner == serial ? 0 : first[1].owner == serial ? 1 : Self.victim(first[0], first[1])
        if first[way].owner != serial
            || !first[way].responses.holds(second: second, age: age, ttl: ttl, variant: variant)
        {
            first[way].owner = serial
            first[way].responses = HitResponses(second: second, age: age, ttl: ttl, variant: variant)
        }
        if gzip { first[way].responses.gzipped = response } else { first[way].responses.identity = response }
        first[way].usedLast = true
        first[1 - way].usedLast = false
        return response
    }

    /// The way of a set to give another entry: an empty one, else the one not used last.
    private static func victim(_ zero: Slot, _ one: Slot) -> Int {
        if zero.owner == 0 { return 0 }
        if one.owner == 0 { return 1 }
        return zero.usedLast ? 1 : 0
    }
}

/// The hit responses of one entry for one second of the clock, of the age and of the remaining
/// freshness, and for one variant of the request (see `HitResponseTable.response`).
private struct HitResponses {
    /// `floor(now)`, for `Date`.
    var second = Int.min
    /// `floor(now) - floor(storedAt)`, for `Age`.
    var age = Int.min
    /// Whole seconds of freshness left, for `max-age` and `Cache-Status`.
    var ttl = Int.min
    /// What else the kept responses depend on, as the route says it (empty for most).
    var variant = ""
    var identity: Response?
    var gzipped: Response?

    /// None kept yet.
    init() {}

    init(second: Int, age: Int, ttl: Int, variant: String) {
        self.second = second
        self.age = age
        self.ttl = ttl
        self.variant = variant
    }

    /// Whether the kept responses are for this second, age, freshness and variant.
    func holds(second: Int, age: Int, ttl: Int, variant: String) -> Bool {
        self.second == second && self.age == age && self.ttl == ttl && self.variant == variant
    }
}
