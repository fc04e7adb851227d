import MetEngine

/// `wait`, on the routes that hydrate objects (`/search`, `/objects?ids=`): how long to wait for
/// uncached objects, in milliseconds, before answering with what has arrived (the rest listed as
/// `pending`, still loading in the background).
enum WaitParameter {
    /// The default, in milliseconds.
    static let defaultMilliseconds = 5_000
    /// The longest wait a client may ask for, in milliseconds.
    static let maxMilliseconds = 30_000

    /// The wait `text` asks for, in seconds; the default when `text` is nil. Throws
    /// `invalid_parameter` naming `wait` unless it is 1 to 9 ASCII digits within the bound.
    static func seconds(_ text: String?) throws(Problem) -> Double {
        guard let text else { return Double(defaultMilliseconds) / 1_000 }
        guard (1...9).contains(text.utf8.count), text.utf8.allSatisfy({ (0x30...0x39).contains($0) }),
            let number = Int(text), number <= maxMilliseconds
        else {
            throw Problem(
                .invalidParameter, "wait must be milliseconds from 0 to \(maxMilliseconds).", parameter: "wait")
        }
        return Double(number) / 1_000
    }
}
