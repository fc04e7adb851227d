import HTTPWire
import MetEngine

extension Problem {
    /// The problem document that answers a request the reader refused (the connection then
    /// closes): the one place that decides the status and code of each kind of wire failure.
    init(_ error: WireError) {
        switch error {
        case .malformed(let detail): self.init(.malformedRequest, detail)
        case .invalidTarget(let detail): self.init(.invalidRequestTarget, detail)
        case .unsupportedVersion(let detail): self.init(.httpVersionNotSupported, detail)
        case .unsupportedTransferCoding(let detail): self.init(.transferCodingNotSupported, detail)
        case .bodyTooLarge(let detail): self.init(.bodyTooLarge, detail)
        case .trailerTooLarge(let detail): self.init(.headersTooLarge, detail)
        }
    }
}
