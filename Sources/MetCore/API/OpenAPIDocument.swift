import MetEngine

/// The API contract: `openapi.yaml` from the repository root, compiled into the binary (through
/// the `Resources/openapi.yaml` link), so the served spec always matches the build.
public enum OpenAPIDocument {
    /// The document's bytes.
    public static var bytes: [UInt8] { PackageResources.openapi_yaml }
}
