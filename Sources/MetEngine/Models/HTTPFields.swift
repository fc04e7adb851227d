import HTTPGrammar

/// An ordered list of HTTP header fields. Names compare case-insensitively (RFC 9110 §5.1);
/// the order and spelling given are kept for output.
public struct HTTPFields: Sendable, Equatable, Sequence, ExpressibleByDictionaryLiteral {
    /// One field line.
    public struct Field: Sendable, Equatable {
        public var name: String
        public var value: String

        public init(name: String, value: String) {
            self.name = name
            self.value = value
        }
    }

    private var fields: [Field]

    public init() { fields = [] }

    /// Empty, with room for `capacity` field lines before it reallocates.
    public init(capacity: Int) {
        fields = []
        fields.reserveCapacity(capacity)
    }

    public init(dictionaryLiteral elements: (String, String)...) {
        fields = elements.map { Field(name: $0.0, value: $0.1) }
    }

    /// The number of field lines.
    public var count: Int { fields.count }

    /// The first value for `name` (case-insensitive), or nil.
    public subscript(name: String) -> String? {
        fields.first { Grammar.equalsIgnoringCase($0.name.utf8, name.utf8) }?.value
    }

    /// Every value for `name` (case-insensitive), in the order sent.
    public func values(for name: String) -> [String] {
        fields.lazy.filter { Grammar.equalsIgnoringCase($0.name.utf8, name.utf8) }.map(\.value)
    }

    /// Makes room for `count` field lines in all, so that appending up to that many copies the
    /// lines at most once (when they are shared with another value).
    public mutating func reserveCapacity(_ count: Int) {
        fields.reserveCapacity(count)
    }

    /// Appends a field line, keeping any existing ones with the same name.
    public mutating func append(_ name: String, _ value: String) {
        fields.append(Field(name: name, value: value))
    }

    /// Appends a field line, keeping any existing ones with the same name.
    public mutating func append(_ field: Field) {
        fields.append(field)
    }

    /// Replaces every field named `name` with one line holding `value`.
    public mutating func set(_ name: String, _ value: String) {
        remove(name)
        fields.append(Field(name: name, value: value))
    }

    /// Removes every field named `name`.
    public mutating func remove(_ name: String) {
        fields.removeAll { Grammar.equalsIgnoringCase($0.name.utf8, name.utf8) }
    }

    public func makeIterator() -> IndexingIterator<[Field]> { fields.makeIterator() }
}
