import MetEngine

/// This server's routes as `/metrics` labels them.
extension MetricRoute {
    static let object = MetricRoute(index: 1, name: "object")
    static let objects = MetricRoute(index: 2, name: "objects")
    static let departments = MetricRoute(index: 3, name: "departments")
    static let search = MetricRoute(index: 4, name: "search")
    static let widget = MetricRoute(index: 5, name: "widget")
    static let open = MetricRoute(index: 6, name: "open")
    static let random = MetricRoute(index: 7, name: "random")
    static let iiif = MetricRoute(index: 8, name: "iiif")
    static let explorer = MetricRoute(index: 9, name: "explorer")
    static let mirror = MetricRoute(index: 10, name: "mirror")
    static let purge = MetricRoute(index: 11, name: "purge")
    static let health = MetricRoute(index: 12, name: "health")
    static let openapi = MetricRoute(index: 13, name: "openapi")
    static let metrics = MetricRoute(index: 14, name: "metrics")
    static let images = MetricRoute(index: 15, name: "images")
    static let iiifImage = MetricRoute(index: 16, name: "iiif_image")
    static let snapshot = MetricRoute(index: 17, name: "snapshot")
    static let changes = MetricRoute(index: 18, name: "changes")

    /// Every label, in the order `/metrics` lists them; the engine's counters are made for these.
    static let all: [MetricRoute] = [
        .object, .objects, .departments, .search, .widget, .open, .random, .iiif, .iiifImage, .images, .explorer,
        .mirror, .changes, .purge, .snapshot,
        .health, .openapi, .metrics, .none,
    ]
}
