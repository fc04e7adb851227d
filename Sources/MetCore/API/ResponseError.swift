/// A finished error response carried through a `Result` (a problem document, or the 499 for a
/// client that left).
struct ResponseError: Error {
    let response: Response

    init(_ response: Response) {
        self.response = response
    }
}
