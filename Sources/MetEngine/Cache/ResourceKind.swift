/// What a cache entry holds; each kind has its own freshness (see `FreshnessPolicy`).
public enum ResourceKind: String, Sendable, CaseIterable {
    /// One object record (`/objects/{id}`).
    case object
    /// An object ID list (`/objects?departmentIds=…`).
    case objectList
    /// The department list.
    case departments
    /// One upstream search answer: an ID list (v1) or one page of it (v1.1).
    case search
    /// A picture of the Met's image host (`images.metmuseum.org`).
    case image
    /// A document the server itself serves (`/openapi.yaml`): it changes only with the build.
    case document
}
