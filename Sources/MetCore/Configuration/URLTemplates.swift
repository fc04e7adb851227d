import MetEngine

/// Checks for the URLs people configure (`--detail-url`, `--public-url`): only what a server can
/// put in a `Location` or a link without surprises.
enum URLTemplates {
    /// Whether `text` is an absolute `http(s)://host[...]` URL or a path starting with `/` (not
    /// `//`), with no spaces, controls, quotes or angle brackets.
    static func isSafeTarget(_ text: String) -> Bool {
        let forbidden: Set<Unicode.Scalar> = ["\"", "<", ">", "\\", "^", "`", "|"]
        guard !text.isEmpty,
            text.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value < 0x7F && !forbidden.contains($0) })
        else { return false }
        if text.hasPrefix("/") { return !text.hasPrefix("//") }
        let lower = text.lowercased()
        for scheme in ["https://", "http://"] where lower.hasPrefix(scheme) {
            let host = text.dropFirst(scheme.count).prefix { $0 != "/" && $0 != "?" && $0 != "#" }
            return !host.isEmpty && !host.contains("@")
        }
        return false
    }

    /// A `--detail-url` template: a safe target containing `{id}` exactly once and no other braces.
    static func isDetailTemplate(_ text: String) -> Bool {
        let parts = text.components(separatedBy: "{id}")
        return parts.count == 2 && !parts.joined().contains("{") && !parts.joined().contains("}")
            && isSafeTarget(text)
    }

    /// A `--public-url`: an absolute http(s) URL without `{`/`}`, query or fragment; a trailing
    /// `/` is dropped.
    static func publicBase(_ text: String) -> String? {
        var base = text
        while base.hasSuffix("/") { base.removeLast() }
        guard !base.hasPrefix("/"), isSafeTarget(base), !base.contains("{"), !base.contains("}"),
            !base.contains("?"), !base.contains("#")
        else { return nil }
        return base
    }
}
