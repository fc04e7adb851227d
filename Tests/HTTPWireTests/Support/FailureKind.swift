import HTTPWire

/// Which case a `WireError` is, its detail aside: what most tests check.
enum FailureKind {
    case malformed, invalidTarget, unsupportedVersion, unsupportedTransferCoding, bodyTooLarge, trailerTooLarge

    init(_ error: WireError) {
        switch error {
        case .malformed: self = .malformed
        case .invalidTarget: self = .invalidTarget
        case .unsupportedVersion: self = .unsupportedVersion
        case .unsupportedTransferCoding: self = .unsupportedTransferCoding
        case .bodyTooLarge: self = .bodyTooLarge
        case .trailerTooLarge: self = .trailerTooLarge
        }
    }
}
