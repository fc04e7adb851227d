import MetEngine

/// The widget sizes, as the app's widget offered them.
public enum WidgetFamily: String, Sendable, CaseIterable {
    /// Title, artist, image and links.
    case medium
    /// Also the object date, medium and credit line.
    case large
}
