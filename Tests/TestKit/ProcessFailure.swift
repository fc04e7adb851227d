/// A test's set-up failed (a process, a socket, a file it needed); the text says which.
public struct ProcessFailure: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
