/// The change feed's vocabulary (`GET /changes`): what the persistent tier noted about an object's
/// record when it stored the record, in the order it stored them, and the cursors clients keep.
///
/// A change is noted when the tier stores an object's entry over a copy of other content, or where
/// it held none: a record it did not hold (`stored`: fetched for the first time, or again after
/// an eviction or a purge), a record with other bytes than the copy held (`changed`), or a 404 for
/// an object whose record it held (`withdrawn`). An entry stored over itself (a refresh that found
/// the record unchanged, an expiry) notes nothing, nor a 404 for an object not held.
public struct ObjectChange: Sendable, Equatable {
    /// What happened to the object's record.
    public enum Kind: Int, Sendable, CaseIterable {
        /// Stored where the tier held no record of the object.
        case stored = 1
        /// Stored over a record with other bytes.
        case changed = 2
        /// The Met answered 404 for an object whose record the tier held.
        case withdrawn = 3

        /// The word `/changes` lists it as.
        public var name: String {
            switch self {
            case .stored: "stored"
            case .changed: "changed"
            case .withdrawn: "withdrawn"
            }
        }
    }

    /// Its place in the log: every change has a larger one than all noted before it.
    public let sequence: Int64
    public let objectID: Int
    public let kind: Kind
    /// When the answer that made the change was fetched from the Met, seconds since 1970 (for an
    /// imported record, when its maker fetched it).
    public let fetchedAt: Double

    public init(sequence: Int64, objectID: Int, kind: Kind, fetchedAt: Double) {
        self.sequence = sequence
        self.objectID = objectID
        self.kind = kind
        self.fetchedAt = fetchedAt
    }
}

/// A place in one change log: the log's identity (made at random when the log is made, so a cursor
/// from a log that was reset or replaced is told apart) and the sequence of the last change seen.
/// Written `{log}-{sequence}`: 16 lower-case hex digits, `-`, a decimal number of at most 18 digits.
public struct ChangeCursor: Sendable, Equatable, CustomStringConvertible {
    public let log: String
    public let sequence: Int64

    public init(log: String, sequence: Int64) {
        self.log = log
        self.sequence = sequence
    }

    /// Reads a cursor as `description` writes it; nil for anything else (another length, upper
    /// case, a sign, a leading zero, a sequence of more than 18 digits: no log reaches 10¹⁸).
    public init?(_ text: String) {
        let parts = text.utf8.split(separator: UInt8(ascii: "-"), omittingEmptySubsequences: false)
        guard parts.count == 2, parts[0].count == 16,
            parts[0].allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }),
            !parts[1].isEmpty, parts[1].count <= 18, parts[1].allSatisfy({ (0x30...0x39).contains($0) }),
            parts[1].first != UInt8(ascii: "0") || parts[1].count == 1,
            let sequence = Int64(Substring(parts[1]))
        else { return nil }
        log = String(Substring(parts[0]))
        self.sequence = sequence
    }

    public var description: String { "\(log)-\(sequence)" }
}

/// Where a page of the change log starts.
public enum ChangeStart: Sendable, Equatable {
    /// At the oldest change the log keeps.
    case oldest
    /// After every change noted so far: an empty page whose `next` a client polls from.
    case latest
    /// After the change `cursor` names.
    case after(ChangeCursor)
}

/// A page of the change log (`PersistentTier.changes`).
public enum ChangePage: Sendable, Equatable {
    /// The changes after the start, oldest first; the cursor after the last of them (the start's,
    /// when there are none); whether more follow.
    case changes([ObjectChange], next: ChangeCursor, more: Bool)
    /// The start is not in this log (older than what it keeps, ahead of it, or another log's): why,
    /// in words.
    case expired(reason: String)
}
