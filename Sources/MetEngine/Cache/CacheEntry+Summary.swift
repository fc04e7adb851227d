extension CacheEntry {
    /// The summary of an object entry, read when it was stored.
    package var summary: ObjectSummary? {
        if case .object(let summary) = details { return summary }
        return nil
    }
}
