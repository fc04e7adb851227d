import HTTPGrammar

/// Which of the four request-target forms of RFC 9112 §3.2 a target is in, checked against the
/// method: origin-form (`/path?query`) for any method but CONNECT; absolute-form (`http://host/path?query`,
/// `http` or `https`, no userinfo) for any method, as §3.2.2 requires servers to accept;
/// authority-form (`host:port`) only for CONNECT, which takes no other form; asterisk-form (`*`) only for OPTIONS.
struct TargetForm {
    /// The path and query a server routes by, when it differs from the target as sent
    /// (absolute-form); nil to route by the target as sent.
    private(set) var originForm: String?
    /// The authority of an absolute-form target, which replaces the Host field's value.
    private(set) var authority: String?

    /// - Parameter target: visible ASCII (the caller checked).
    /// - Throws: `invalidTarget` for a target in no form valid for `method`.
    init(_ target: Slice<UnsafeRawBufferPointer>, method: String) throws(WireError) {
        if method == "CONNECT" {
            guard Authority.isValid(target, requiresPort: true) else {
                throw .invalidTarget("A CONNECT target must be host:port.")
            }
            return
        }
        if target.first == UInt8(ascii: "/") { return }
        if method == "OPTIONS" && target.elementsEqual("*".utf8) { return }
        let schemeEnd = target.firstIndex(of: UInt8(ascii: ":")) ?? target.endIndex
        let scheme = target[..<schemeEnd]
        let afterScheme = target[schemeEnd...]
        guard
            Grammar.equalsIgnoringCase(scheme, "http".utf8) || Grammar.equalsIgnoringCase(scheme, "https".utf8),
            afterScheme.starts(with: "://".utf8)
        else {
            throw .invalidTarget("The request target must be a path starting with '/' or an absolute http(s) URL.")
        }
        let authorityStart = afterScheme.startIndex + 3
        let rest = target[authorityStart...]
        let pathStart = rest.firstIndex { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") } ?? rest.endIndex
        let hostAndPort = target[authorityStart..<pathStart]
        guard !hostAndPort.isEmpty, hostAndPort.first != UInt8(ascii: ":"), Authority.isValid(hostAndPort) else {
            throw .invalidTarget("An absolute request target needs a valid host and no user@ part.")
        }
        let pathAndQuery = String(decoding: UnsafeRawBufferPointer(rebasing: target[pathStart...]), as: UTF8.self)
        originForm = pathAndQuery.hasPrefix("/") ? pathAndQuery : "/" + pathAndQuery
        authority = String(decoding: UnsafeRawBufferPointer(rebasing: hostAndPort), as: UTF8.self)
    }
}
